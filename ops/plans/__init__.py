"""Device-free op plans: what an op will do to one row, computed once for every device.

A plan turns an op's spec, the input's shape and the row's RNG into plain numbers: the output size,
the crop box, the padding, the warp matrix, the random parameters. The spec's ``output_spec`` uses it
to state the output shape, every device's kernel (``ops/cpu``, ``ops/dvpp``, ``ops/gpu``) executes
it, and the fusion rewrites (``minddata.ops.fused``) reuse it, so a rule (MindSpore's rounding of a
resize, the order of a crop's random draws, the text of an error) is written once, in the plan.

Plans import no device code (no OpenCV, no DALI, no torch) and no public API module, so specs in
``minddata.vision`` and kernels alike can import them. One module per op family, named as the family:
``crop``, ``resize``, ``affine``, ``flip``, ``color``, ``decode``, ``bbox`` (the box-aware ops),
``perspective``, ``multi_crop``, ``pad_erase``, ``mixup``, ``adjust``, ``augment_policies``; ``image`` holds
what they share.
"""
