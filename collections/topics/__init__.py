"""Topic files in the field's shapes, and files of topic ids."""
