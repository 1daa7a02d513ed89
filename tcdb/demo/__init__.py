"""tcdb.demo — `tcdb demo`, the whole mission end to end on generated data: run.py (the
LongEval-shaped longitudinal part), bias.py (the Cocktail-shaped source-bias part). The data
generators are `tcdb.collections.demo`.
"""
