"""Where a snapshot comes from: the SnapshotSource interface and the records it yields; local
files, ir_datasets (LongEval included), Cocktail's layout, documents' source labels."""
