"""gssl.pipeline.paths: the one spelling of each stage's file under the results folder."""
from gssl.pipeline import paths


def test_pattern_keeps_the_wildcards_it_is_not_given():
    assert paths.pattern("res", paths.GRAPH) == "res/graphs/{dataset}/{prep}/{graph}.h5"
    assert paths.pattern("res", paths.TABLES, suffix=".csv") == "res/tables/{experiment}.csv"
    assert paths.pattern("res", paths.RUNS, suffix=".json") == (
        "res/runs/{experiment}/{dataset}/{prep}/{graph}/{method}/{protocol}/splits{first}-{last}.json")


def test_path_fills_in_every_part():
    assert paths.path("res", paths.GRAPH, dataset="moons", prep="std", graph="knn8") == "res/graphs/moons/std/knn8.h5"
    job = {"experiment": "e", "dataset": "d", "prep": "p", "graph": "g", "method": "m", "protocol": "q",
           "first": 0, "last": 4}
    assert paths.path("res", paths.SELECTION, suffix=".json", **job) == "res/selection/e/d/p/g/m/q/splits0-4.json"
    assert paths.path("res", paths.PLOT, experiment="e", plot="error") == "res/plots/e/error.png"


def test_path_refuses_a_missing_part():
    import pytest

    with pytest.raises(KeyError):
        paths.path("res", paths.FEATURES, dataset="moons")
