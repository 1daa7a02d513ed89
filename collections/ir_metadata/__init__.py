"""ir_metadata (PRIMAD) run descriptions: the schema and the YAML read and written back."""
