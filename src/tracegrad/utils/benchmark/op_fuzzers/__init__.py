"""``torch.utils.benchmark.op_fuzzers``: ready-made fuzzers for unary, binary and spectral ops. (As in PyTorch
2.13, constructing one fails: their dimension-count parameters use custom distributions, which 2.13 refuses.)"""
