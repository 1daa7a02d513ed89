"""Opening and reading the field's files: paths, compression, line ends, numbers as trec_eval
reads them, bad lines set aside, YAML as data, CSV cells made safe."""
