"""One short program per warning tracegrad can emit (``tools/warning_sweep.py`` runs them in both libraries).

Each runs with ``torch`` bound to the library under test; a warning torch gives once a process is triggered twice
so that the sweep also compares how often it is shown.
"""

TRIGGERS: dict[str, str] = {
    # ---- operators (torch: TORCH_WARN in C++, shown at the user's line, or torch's own Python code)
    "cross without dim": "a = torch.randn(3, 4); torch.cross(a, a)",
    "cross without dim, method": "a = torch.randn(3, 4); a.cross(a)",
    "cross without dim, out": "a = torch.randn(3, 4); torch.cross(a, a, out=torch.empty(3, 4))",
    "where uint8": "c = torch.tensor([1, 0], dtype=torch.uint8); x = torch.ones(2)\n"
                   "torch.where(c, x, x); torch.where(c, x, x)",
    "where uint8, method": "c = torch.tensor([1, 0], dtype=torch.uint8); x = torch.ones(2); x.where(c, x)",
    "where uint8, out": "c = torch.tensor([1, 0], dtype=torch.uint8); x = torch.ones(2)\n"
                        "torch.where(c, x, x, out=torch.empty(2))",
    "cov dof": "torch.cov(torch.randn(2, 1))",
    "cov dof, method": "torch.randn(2, 1).cov()",
    "var dof": "torch.var(torch.randn(1))",
    "var dof, method": "torch.randn(1).var()",
    "std dof": "torch.std(torch.randn(1), 0)",
    "std dof, method": "torch.randn(1).std(0)",
    "var_mean dof": "torch.var_mean(torch.randn(1))",
    "std_mean dof": "torch.std_mean(torch.randn(1), dim=0)",
    "var dof, out": "torch.var(torch.randn(1), 0, out=torch.empty(()))",
    "meshgrid indexing": "a = torch.ones(2); torch.meshgrid(a, a)",
    "slice truncation": "x = torch.ones(3); x[-2**63:]",
    "triangular_solve": "a = torch.eye(2); torch.triangular_solve(a, a); torch.triangular_solve(a, a)",
    "triangular_solve, method": "a = torch.eye(2); a.triangular_solve(a); a.triangular_solve(a)",
    "lu": "a = torch.eye(2); torch.lu(a); torch.lu(a)",
    "lu, method": "a = torch.eye(2); a.lu(); a.lu()",
    "lu_solve": "a = torch.eye(2); LU, p = torch.linalg.lu_factor(a)\n"
                "torch.lu_solve(a, LU, p); torch.lu_solve(a, LU, p)",
    "lu_solve, method": "a = torch.eye(2); LU, p = torch.linalg.lu_factor(a); a.lu_solve(LU, p); a.lu_solve(LU, p)",
    "nuclear_norm": "a = torch.eye(2); torch.nuclear_norm(a); torch.nuclear_norm(a)",
    "nuclear_norm, out": "a = torch.eye(2); torch.nuclear_norm(a, out=torch.empty(()))",
    "nuclear_norm, dim": "a = torch.eye(2); torch.nuclear_norm(a, dim=(0, 1))",
    "chain_matmul": "a = torch.eye(2); torch.chain_matmul(a, a); torch.chain_matmul(a, a)",
    "chain_matmul, out": "a = torch.eye(2); torch.chain_matmul(a, a, out=torch.empty(2, 2))",
    "cholesky": "a = torch.eye(2); torch.cholesky(a); torch.cholesky(a)",
    "cholesky, method": "a = torch.eye(2); a.cholesky(); a.cholesky()",
    "stft no window": "x = torch.randn(64); torch.stft(x, 16, return_complex=True)\n"
                      "torch.stft(x, 16, return_complex=True)",
    "stft no window, method": "x = torch.randn(64); x.stft(16, return_complex=True); x.stft(16, return_complex=True)",
    "stft real": "x = torch.randn(64); w = torch.hann_window(16)\n"
                 "torch.stft(x, 16, window=w, return_complex=False); torch.stft(x, 16, window=w, return_complex=False)",
    "istft no window": "x = torch.randn(64); w = torch.hann_window(16); s = torch.stft(x, 16, window=w, "
                       "return_complex=True)\ntorch.istft(s, 16); torch.istft(s, 16)",
    "istft no window, method": "x = torch.randn(64); w = torch.hann_window(16); s = torch.stft(x, 16, window=w, "
                               "return_complex=True)\ns.istft(16); s.istft(16)",
    "lstm projections": "m = torch.nn.LSTM(4, 6, proj_size=3); x = torch.randn(5, 2, 4); m(x); m(x)",
    "lstm projections, function mode": (
        "class M(torch.overrides.TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        return func(*args, **(kwargs or {}))\n"
        "m = torch.nn.LSTM(4, 6, proj_size=3); x = torch.randn(5, 2, 4)\n"
        "with M():\n"
        "    m(x)"),
    "lstm projections, _VF": "m = torch.nn.LSTM(4, 6, proj_size=3); x = torch.randn(5, 2, 4)\n"
                             "h = (torch.zeros(1, 2, 3), torch.zeros(1, 2, 6))\n"
                             "torch.lstm(x, h, m._flat_weights, True, 1, 0.0, False, False, False)",
    "softmax implicit dim": "torch.nn.functional.softmax(torch.randn(2, 3))",
    "log_softmax implicit dim": "torch.nn.functional.log_softmax(torch.randn(2, 3))",
    "softmin implicit dim": "torch.nn.functional.softmin(torch.randn(2, 3))",
    "Softmax module implicit dim": "torch.nn.Softmax()(torch.randn(2, 3))",
    "LogSoftmax module implicit dim": "torch.nn.LogSoftmax()(torch.randn(2, 3))",
    "Softmin module implicit dim": "torch.nn.Softmin()(torch.randn(2, 3))",
    "conv same even kernel": "w = torch.randn(1, 1, 2); x = torch.randn(1, 1, 5)\n"
                             "torch.nn.functional.conv1d(x, w, padding='same')\n"
                             "torch.nn.functional.conv1d(x, w, padding='same')",
    "conv same even kernel, module": "m = torch.nn.Conv2d(1, 1, 2, padding='same'); m(torch.randn(1, 1, 4, 4))",
    "sdpa flash only": "q = torch.randn(1, 1, 2, 4)\n"
                       "with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):\n"
                       "    torch.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(2, 2))",
    "mse size mismatch": "torch.nn.functional.mse_loss(torch.randn(3), torch.randn(3, 1))",
    "l1 size mismatch": "torch.nn.functional.l1_loss(torch.randn(3), torch.randn(3, 1))",
    "smooth_l1 size mismatch": "torch.nn.functional.smooth_l1_loss(torch.randn(3), torch.randn(3, 1))",
    "huber size mismatch": "torch.nn.functional.huber_loss(torch.randn(3), torch.randn(3, 1))",
    "bce size mismatch": "torch.nn.functional.binary_cross_entropy(torch.rand(3), torch.rand(3, 1))",
    "MSELoss module size mismatch": "torch.nn.MSELoss()(torch.randn(3), torch.randn(3, 1))",
    "L1Loss module size mismatch": "torch.nn.L1Loss()(torch.randn(3), torch.randn(3, 1))",
    "asarray requires_grad": "x = torch.ones(2, requires_grad=True); torch.asarray(x); torch.asarray(x)",
    "is_pinned device": "torch.ones(2).is_pinned('cpu')",
    "index_reduce beta": "x = torch.ones(3); i = torch.tensor([0]); s = torch.ones(1)\n"
                         "x.index_reduce(0, i, s, 'prod'); x.index_reduce(0, i, s, 'prod')",
    "index_reduce beta, function": "x = torch.ones(3); i = torch.tensor([0]); s = torch.ones(1)\n"
                                   "torch.index_reduce(x, 0, i, s, 'prod')",
    "range": "torch.range(0, 2)",
    "range, out": "torch.range(0, 2, out=torch.empty(3))",
    "scatter reduce with tensor src": "x = torch.ones(3); i = torch.tensor([0]); s = torch.ones(1)\n"
                                      "x.scatter(0, i, s, reduce='add'); x.scatter(0, i, s, reduce='add')",
    "scatter_ reduce with tensor src": "x = torch.ones(3); i = torch.tensor([0]); s = torch.ones(1)\n"
                                       "x.scatter_(0, i, s, reduce='add')",
    "scatter reduce, function": "x = torch.ones(3); i = torch.tensor([0]); s = torch.ones(1)\n"
                                "torch.scatter(x, 0, i, s, reduce='add')",
    "searchsorted non-contiguous": "s = torch.arange(8.)[::2]; torch.searchsorted(s, torch.ones(2))\n"
                                   "torch.searchsorted(s, torch.ones(2))",
    "bucketize non-contiguous": "s = torch.arange(8.)[::2]; torch.bucketize(torch.ones(2), s)",
    "indexing with list": "x = torch.ones(3, 3); x[[[0, 1], [0, 1]]]",
    "indexing uint8": "x = torch.ones(3); x[torch.tensor([1, 0, 1], dtype=torch.uint8)]",
    "indexing uint8, setitem": "x = torch.ones(3); x[torch.tensor([1, 0, 1], dtype=torch.uint8)] = 2",
    "out resize": "torch.sin(torch.ones(3), out=torch.empty(2))",
    "out resize, add": "torch.add(torch.ones(3), 1, out=torch.empty(2))",
    "out resize, mm": "torch.mm(torch.ones(2, 2), torch.ones(2, 2), out=torch.empty(3))",
    "out resize, sum": "torch.sum(torch.ones(2, 2), 0, out=torch.empty(3))",
    "out resize, max dim": "torch.max(torch.ones(2, 2), 0, out=(torch.empty(3), torch.empty(3, dtype=torch.long)))",
    "out resize, cat": "torch.cat([torch.ones(2)], out=torch.empty(3))",
    "out resize, linalg.inv": "torch.linalg.inv(torch.eye(2), out=torch.empty(3))",
    "out resize, arange": "torch.arange(3, out=torch.empty(2))",
    "out resize, linspace": "torch.linspace(0, 1, 3, out=torch.empty(2))",
    "float32 matmul precision": "torch.set_float32_matmul_precision('bogus') if False else None",
    "complex to real copy": "x = torch.zeros(2); x.copy_(torch.ones(2, dtype=torch.complex64))\n"
                            "x.copy_(torch.ones(2, dtype=torch.complex64))",
    "complex to real float()": "x = torch.ones(2, dtype=torch.complex64); x.float(); x.float()",
    "complex to real to()": "x = torch.ones(2, dtype=torch.complex64); x.to(torch.float32)",
    "complex to real, python float": "float(torch.tensor(1 + 1j))",
    "complex to real, fill_": "torch.zeros(2).fill_(torch.tensor(1 + 1j))",
    "float of requires grad": "x = torch.ones((), requires_grad=True); float(x); float(x)",
    "float of requires grad, item-like": "x = torch.ones((), requires_grad=True); int(x)",
    "tensor from ndarray list": "torch.tensor([np.ones(2), np.ones(2)]); torch.tensor([np.ones(2), np.ones(2)])",
    "tensor from tensor": "torch.tensor(torch.ones(2))",
    "as_tensor not writable": "a = np.ones(2); a.flags.writeable = False; torch.as_tensor(a); torch.from_numpy(a)",
    "from_numpy not writable": "a = np.ones(2); a.flags.writeable = False; torch.from_numpy(a); torch.from_numpy(a)",
    "typed storage": "torch.ones(2).storage(); torch.ones(2).storage()",
    "typed storage, FloatStorage": "torch.FloatStorage(2)",
    "T of 3-d": "x = torch.ones(2, 2, 2); x.T; x.T",
    "T of 0-d": "x = torch.ones(()); x.T; x.T",
    "mT of 0-d": "x = torch.ones(()); x.mT",
    "mH of 0-d": "x = torch.ones(()); x.mH",
    "set_default_tensor_type": "torch.set_default_tensor_type(torch.DoubleTensor)\n"
                               "torch.set_default_tensor_type(torch.FloatTensor)",
    "deprecated overload add": "x = torch.ones(2); torch.add(x, 2, x)",
    "deprecated overload addcmul": "x = torch.ones(2); torch.addcmul(x, 2, x, x)",
    "deprecated overload method": "x = torch.ones(2); x.add(2, x); x.addcmul(2, x, x)",
    "deprecated overload sub_": "x = torch.ones(2); x.sub_(2, x)",
    "rms_norm mixed dtype": "x = torch.ones(2, 3, dtype=torch.bfloat16)\n"
                            "torch.nn.functional.rms_norm(x, (3,), torch.ones(3)); "
                            "torch.nn.functional.rms_norm(x, (3,), torch.ones(3))",
    "resize non-inplace": "torch.ones(2).resize(4)",
    "resize_as non-inplace": "torch.ones(2).resize_as(torch.ones(4))",
    "volatile": "torch.ones(2).volatile",
    "backward create_graph leaf": "x = torch.ones(2, requires_grad=True); (x * x).sum().backward(create_graph=True)",
    "backward grad_variables": "x = torch.ones(2, requires_grad=True)\n"
                               "torch.autograd.backward((x * 2).sum(), grad_variables=torch.tensor(1.))",
    "accumulate grad layout": "x = torch.ones(2, 2, requires_grad=True); x.grad = torch.zeros(2, 2).t()\n"
                              "x.sum().backward()",
    "non-leaf .grad": "x = torch.ones(2, requires_grad=True); y = x * 2; y.grad",
    "sparse addmm etc": "pass",
    "anomaly enabled": "with torch.autograd.detect_anomaly(): pass",
    "anomaly nan": "x = torch.zeros(1, requires_grad=True)\n"
                   "with torch.autograd.detect_anomaly():\n"
                   "    try:\n"
                   "        (x / x).sum().backward()\n"
                   "    except RuntimeError:\n"
                   "        pass",
    "no_grad decorating class": "@torch.no_grad()\nclass C:\n    pass",
    "Function instantiated": "class F(torch.autograd.Function):\n    @staticmethod\n"
                             "    def forward(ctx, x): return x\nF()",
    "mark_shared_storage": (
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.mark_shared_storage((x, x))\n"
        "        return x * 1\n"
        "    @staticmethod\n"
        "    def backward(ctx, g): return g\n"
        "F.apply(torch.ones(2, requires_grad=True))"),
    "saved_variables": (
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        ctx.save_for_backward(x)\n"
        "        return x * 1\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        ctx.saved_variables\n"
        "        return g\n"
        "F.apply(torch.ones(2, requires_grad=True)).sum().backward()"),
    "mark_dirty non-input": (
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        y = x * 1\n"
        "        ctx.mark_dirty(y)\n"
        "        return y\n"
        "    @staticmethod\n"
        "    def backward(ctx, g): return g\n"
        "F.apply(torch.ones(2, requires_grad=True))"),
    "gradcheck float32": "torch.autograd.gradcheck(torch.sin, torch.ones(2, requires_grad=True), atol=1, rtol=1)",
    "get_numerical_jacobian": "torch.autograd.gradcheck.get_numerical_jacobian(\n"
                              "    lambda x: x * 2, (torch.ones(2, dtype=torch.double),))",
    "checkpoint use_reentrant": "x = torch.ones(2, requires_grad=True)\n"
                                "torch.utils.checkpoint.checkpoint(torch.sin, x)",
    "checkpoint no grad inputs": "torch.utils.checkpoint.checkpoint(torch.sin, torch.ones(2), use_reentrant=True)",
    "checkpoint_sequential": "m = torch.nn.Sequential(torch.nn.Linear(2, 2))\n"
                             "torch.utils.checkpoint.checkpoint_sequential(m, 1, torch.ones(1, 2, requires_grad=True))",
    # ---- nn
    "module to complex": "torch.nn.Linear(2, 2).to(torch.complex64)",
    "state_dict positional": "m = torch.nn.Linear(2, 2); m.state_dict({}, 'p.')",
    "non-full backward hook": "m = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())\n"
                              "m.register_backward_hook(lambda *a: None)\n"
                              "m(torch.ones(1, 2, requires_grad=True)).sum().backward()",
    "full backward hook no input grad": "m = torch.nn.Linear(2, 2); m.register_full_backward_hook(lambda *a: None)\n"
                                        "m(torch.ones(1, 2)).sum().backward()",
    "rnn dropout one layer": "torch.nn.LSTM(2, 2, dropout=0.5)",
    "gru dropout one layer": "torch.nn.GRU(2, 2, dropout=0.5)",
    "rnn dropout one layer, RNN": "torch.nn.RNN(2, 2, dropout=0.5)",
    "hardtanh min_value": "torch.nn.Hardtanh(min_value=-2.)",
    "hardtanh max_value": "torch.nn.Hardtanh(max_value=2.)",
    "instance norm num_features": "m = torch.nn.InstanceNorm1d(3); m(torch.randn(2, 4, 5))",
    "transformer nested": "l = torch.nn.TransformerEncoderLayer(4, 2, batch_first=False)\n"
                          "torch.nn.TransformerEncoder(l, 1)",
    "mha mismatched masks": "m = torch.nn.MultiheadAttention(4, 2); x = torch.randn(3, 1, 4)\n"
                            "m(x, x, x, key_padding_mask=torch.zeros(1, 3, dtype=torch.bool), "
                            "attn_mask=torch.zeros(3, 3))",
    "embedding_bag order": "w = torch.randn(5, 2); i = torch.tensor([0, 1])\n"
                           "torch.nn.functional.embedding_bag(w, i, torch.tensor([0]))",
    "trunc_normal far": "torch.nn.init.trunc_normal_(torch.empty(3), mean=10.)",
    "init zero element": "torch.nn.init.xavier_uniform_(torch.empty(0, 3))",
    "init zero element kaiming": "torch.nn.init.kaiming_uniform_(torch.empty(0, 3))",
    "init deprecated": "torch.nn.init.uniform(torch.empty(3))",
    "init deprecated normal": "torch.nn.init.xavier_normal(torch.empty(3, 3))",
    "elementwise_mean": "torch.nn.functional.mse_loss(torch.ones(2), torch.ones(2), reduction='elementwise_mean')",
    "size_average": "torch.nn.functional.mse_loss(torch.ones(2), torch.ones(2), size_average=False)",
    "size_average, module": "torch.nn.MSELoss(size_average=False)",
    "bce target size": "torch.nn.functional.binary_cross_entropy(torch.rand(3), torch.rand(3, 1))",
    "gumbel eps": "torch.nn.functional.gumbel_softmax(torch.randn(3), eps=1e-3)",
    "kl_div mean": "torch.nn.functional.kl_div(torch.randn(2, 3), torch.rand(2, 3))",
    "KLDivLoss mean": "torch.nn.KLDivLoss()(torch.randn(2, 3), torch.rand(2, 3))",
    "dropout1d wrong dim": "torch.nn.functional.dropout1d(torch.randn(2, 2, 2, 2))",
    "dropout2d 3d": "torch.nn.functional.dropout2d(torch.randn(2, 2, 2))",
    "dropout3d wrong dim": "torch.nn.functional.dropout3d(torch.randn(2, 2))",
    "Dropout2d module 3d": "torch.nn.Dropout2d()(torch.randn(2, 2, 2))",
    "upsample": "torch.nn.functional.upsample(torch.randn(1, 1, 2), scale_factor=2)",
    "upsample_nearest": "torch.nn.functional.upsample_nearest(torch.randn(1, 1, 2), scale_factor=2)",
    "upsample_bilinear": "torch.nn.functional.upsample_bilinear(torch.randn(1, 1, 2, 2), scale_factor=2)",
    "Upsample module": "torch.nn.UpsamplingNearest2d(scale_factor=2)(torch.randn(1, 1, 2, 2))",
    "affine_grid align_corners": "torch.nn.functional.affine_grid(torch.randn(1, 2, 3), (1, 1, 2, 2))",
    "affine_grid unit size": "torch.nn.functional.affine_grid(torch.randn(1, 2, 3), (1, 1, 1, 2), "
                             "align_corners=True)",
    "grid_sample align_corners": "torch.nn.functional.grid_sample(torch.randn(1, 1, 2, 2), torch.zeros(1, 1, 1, 2))",
    "clip_grad empty generator": "torch.nn.utils.clip_grad_norm_((p for p in []), 1.0)",
    "clip_grad_norm deprecated": "p = torch.nn.Parameter(torch.ones(2)); p.grad = torch.ones(2)\n"
                                 "torch.nn.utils.clip_grad_norm(p, 1.0)",
    "weight_norm": "torch.nn.utils.weight_norm(torch.nn.Linear(2, 2))",
    "stateless functional_call": "m = torch.nn.Linear(2, 2)\n"
                                 "torch.nn.utils.stateless.functional_call(m, dict(m.named_parameters()), "
                                 "(torch.ones(2),))",
    "interpolate": "torch.nn.functional.interpolate(torch.randn(1, 1, 2), scale_factor=2, mode='linear')",
    # ---- optim
    "optimizer duplicate params": "p = torch.nn.Parameter(torch.ones(2)); torch.optim.SGD([p, p], lr=0.1)",
    "lr scheduler step before optimizer": "p = torch.nn.Parameter(torch.ones(2)); o = torch.optim.SGD([p], lr=0.1)\n"
                                          "s = torch.optim.lr_scheduler.StepLR(o, 1); s.step()",
    "lr scheduler epoch": "p = torch.nn.Parameter(torch.ones(2)); o = torch.optim.SGD([p], lr=0.1)\n"
                          "s = torch.optim.lr_scheduler.StepLR(o, 1); o.step(); s.step(1)",
    "lr scheduler get_lr": "p = torch.nn.Parameter(torch.ones(2)); o = torch.optim.SGD([p], lr=0.1)\n"
                           "s = torch.optim.lr_scheduler.StepLR(o, 1); s.get_lr()",
    "lr scheduler get_lr, cosine": "p = torch.nn.Parameter(torch.ones(2)); o = torch.optim.SGD([p], lr=0.1)\n"
                                   "s = torch.optim.lr_scheduler.CosineAnnealingLR(o, 3); s.get_lr()",
    "plateau epoch": "p = torch.nn.Parameter(torch.ones(2)); o = torch.optim.SGD([p], lr=0.1)\n"
                     "s = torch.optim.lr_scheduler.ReduceLROnPlateau(o); s.step(1.0, 1)",
    "swa get_lr": "p = torch.nn.Parameter(torch.ones(2)); o = torch.optim.SGD([p], lr=0.1)\n"
                  "s = torch.optim.swa_utils.SWALR(o, 0.05); s.get_lr()",
    # ---- distributions
    "distribution sample_n": "torch.distributions.Normal(0., 1.).sample_n(2)",
    "lkj / wishart low df": "torch.distributions.Wishart(torch.tensor(1.5), torch.eye(3))",
    "kl ambiguous": "pass",
    # ---- misc
    "pytree register deprecated": "p = torch.utils._pytree\nclass A: pass\n"
                                  "p._register_pytree_node(A, lambda a: ([], None), lambda c, x: A())",
    "pytree _is_leaf": "p = torch.utils._pytree; p._is_leaf(1)",
    "pytree LeafSpec": "p = torch.utils._pytree; isinstance(p.LeafSpec(), p.LeafSpec)",
    "autocast unsupported dtype": "with torch.autocast('cpu', dtype=torch.float32): pass",
    "cuda autocast deprecated": "torch.cuda.amp.autocast(enabled=False)",
    "GradScaler no cuda": "torch.cuda.amp.GradScaler()",
    "amp.GradScaler": "torch.amp.GradScaler('cpu')",
    "autocast state deprecated": "torch.is_autocast_cpu_enabled()",
    "random fork": "pass",
    "profiler warmup": "torch.profiler.schedule(wait=0, warmup=0, active=1)",
    "dataset cummulative_sizes": "d = torch.utils.data\n"
                                 "d.ConcatDataset([d.TensorDataset(torch.ones(2))]).cummulative_sizes",
    "random_split zero length": "d = torch.utils.data\n"
                                "d.random_split(d.TensorDataset(torch.ones(2)), [0.0, 1.0])",
    "dataloader workers": "torch.utils.data.DataLoader([1, 2], num_workers=1000)",
    "dataloader pin_memory": "iter(torch.utils.data.DataLoader([1, 2], pin_memory=True))",
    "testing make_tensor": "torch.testing.make_tensor(2, dtype=torch.float32, device='cpu', low=1, high=1)",
    "testing assert_allclose": "torch.testing.assert_allclose(torch.ones(2), torch.ones(2))",
    "jit ignore True": "torch.jit.ignore(True)",
    "library override": "pass",
    "hook not serialized": "import pickle\nx = torch.ones(2, requires_grad=True) * 1\n"
                           "x.register_hook(lambda g: g)\npickle.dumps(x) if False else x.__reduce_ex__(2)",
    "tensor_compat": "pass",
    "backends cuda": "torch.backends.cuda.matmul.allow_tf32",
    "spawn context": "torch.multiprocessing.SpawnContext",
}
