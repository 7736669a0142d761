"""Compile a dataflow graph into a plan of stages and execute it."""
