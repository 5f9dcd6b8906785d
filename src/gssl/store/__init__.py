"""On-disk storage shared by every layer: self-describing atomic HDF5 files and stable hashes."""
