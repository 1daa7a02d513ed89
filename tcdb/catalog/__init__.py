"""tcdb.catalog — what a collection is made of: collections.py (collections and their snapshots,
synced from collection specs), topic_sets.py (named topic subsets of a collection),
contamination.py (per model and topic, how likely the model has seen the topic).
"""
