"""MLflow: the client that logs runs and summaries (:mod:`.client`, the only module that imports
MLflow), the records jobs write for it (:mod:`.records`), the UI's saved views (:mod:`.views`) and
the shared tracking server (:mod:`.server`)."""
