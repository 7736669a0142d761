"""Debug hooks, as ``mindspore.dataset.debug``: what a map shows of its data in debug mode.

With ``config.set_debug_mode(True, debug_hook_list=[...])`` every map of pipelines iterated afterwards
runs serially (one worker, in this process) and calls each hook on the values going into its first
transform and coming out of every transform. A hook sees the values and passes them on unchanged.
Subclass :class:`DebugHook` and override :meth:`~DebugHook.compute` to inspect them (print, log, stop
in a debugger); :class:`PrintMetaDataHook` (the default) prints types and shapes, :class:`PrintDataHook`
prints the values.

Examples:
    >>> import minddata as md
    >>> from minddata.dataset import debug
    >>> class Shapes(debug.DebugHook):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.seen = []
    ...     def compute(self, *args):
    ...         self.seen.append((self.prev_op_name, [a.shape for a in args]))
    ...         return args
    >>> hook = Shapes()
    >>> md.config.set_debug_mode(True, debug_hook_list=[hook])
    >>> ds = md.NumpySlicesDataset({"x": [[1, 2, 3]]}, shuffle=False).map(md.transforms.Duplicate(),
    ...     input_columns="x", output_columns=["x", "y"])
    >>> _ = list(ds.create_tuple_iterator(num_epochs=1, output_numpy=True))
    >>> hook.seen
    [(None, [(3,)]), ('Duplicate', [(3,), (3,)])]
    >>> md.config.load_defaults()
"""

from minddata.engine.debughooks import DebugHook, PrintDataHook, PrintMetaDataHook

__all__ = ["DebugHook", "PrintMetaDataHook", "PrintDataHook"]
