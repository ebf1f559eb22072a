"""Fleet scale (planned): the same formats/analysis code run by an engine — ``local`` in-process or
``spark`` through PySpark. Nothing lives here yet; see ARCHITECTURE.md."""
