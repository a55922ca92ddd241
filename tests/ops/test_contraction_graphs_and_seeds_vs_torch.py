"""Three things a user sees differ from torch 2.13 and now match it:

- ``tensordot`` (and ``inner``, which is tensordot over the last dims) of operands whose free dims hold one
  element each contracts with ``dot`` of the flattened operands, so the graph reads ViewBackward0 over
  DotBackward0, not MmBackward0; a vector pair given to ``inner`` goes the same way (through permutes), and a
  bool pair is refused by ``dot``'s words;
- the warning for an ``out=`` tensor of elements resized is shown at the user's line, as torch's C++ warnings
  are, not at a line inside tracegrad;
- the default generator is seeded from the operating system at start-up, so a program that never seeds draws
  other numbers on each run, while a new ``Generator()`` starts from torch's fixed default seed, and ``seed()``
  draws from all 64 bits.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from tests._lib import assert_close, raised, recorded_graph, tg, torch

CONTRACTIONS = [
    ((3,), (3,), 1), ((1,), (1,), 0), ((0,), (0,), 1), ((1, 0), (0, 1), 1), ((1, 1), (1, 1), 2),
    ((1, 3), (3, 1), 1), ((3, 4), (3, 4, 1), 2), ((), (), 0), ((2, 3), (3, 1), 1), ((3,), (3, 4), 1),
]


def _contraction(lib, shape_a, shape_b, dims):
    lib.manual_seed(0)
    a = lib.randn(shape_a, dtype=lib.float64, requires_grad=True)
    b = lib.randn(shape_b, dtype=lib.float64, requires_grad=True)
    result = lib.tensordot(a, b, dims=dims)
    first, = lib.autograd.grad(result.sum(), a, create_graph=True)
    return (recorded_graph([result]), recorded_graph([first])), (result.detach(), first.detach())


@pytest.mark.parametrize("shape_a, shape_b, dims", CONTRACTIONS, ids=str)
def test_tensordot_graph_values_and_double_backward(shape_a, shape_b, dims):
    graphs, values = _contraction(tg, shape_a, shape_b, dims)
    torch_graphs, torch_values = _contraction(torch, shape_a, shape_b, dims)
    assert graphs == torch_graphs
    for value, expected in zip(values, torch_values):  # (products are not bit for bit: BLAS sums in its order)
        assert_close(value, expected)


@pytest.mark.parametrize("shape", [(3,), (1, 3), (2, 3)], ids=str)
def test_inner_goes_through_tensordot(shape):
    def run(lib):
        lib.manual_seed(1)
        a = lib.randn(shape, requires_grad=True)
        b = lib.randn(shape, dtype=lib.float64).float().requires_grad_()
        result = lib.inner(a, b)
        result.sum().backward()
        return recorded_graph([result]), (result.detach(), a.grad, b.grad)

    graph, values = run(tg)
    torch_graph, torch_values = run(torch)
    assert graph == torch_graph
    for value, expected in zip(values, torch_values):
        assert_close(value, expected)


@pytest.mark.parametrize("shape", [(3,), (2, 3)], ids=str)
def test_bool_contractions_are_refused_by_the_product_they_reach(shape):
    for program in (lambda lib: lib.inner(lib.ones(shape, dtype=lib.bool), lib.ones(shape, dtype=lib.bool)),
                    lambda lib: lib.tensordot(lib.ones(shape, dtype=lib.bool), lib.ones(shape[::-1], dtype=lib.bool),
                                              1)):
        assert raised(tg, program) == raised(torch, program)


@pytest.mark.parametrize("call", [
    lambda lib, out: lib.inner(lib.ones(3), lib.ones(3), out=out),
    lambda lib, out: lib.tensordot(lib.ones(3), lib.ones(3), 1, out=out),
    lambda lib, out: lib.add(lib.ones(3), 1, out=out),
    lambda lib, out: lib.mm(lib.ones(2, 2), lib.ones(2, 2), out=out),
    lambda lib, out: lib.kron(lib.ones(2), lib.ones(2), out=out),
    lambda lib, out: lib.cumsum(lib.ones(3), 0, out=out),
], ids=["inner", "tensordot", "add", "mm", "kron", "cumsum"])
def test_out_resized_warning_points_at_the_users_line(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(tg, tg.empty(5))
    assert [w.filename for w in caught] == [__file__]
    assert "An output with one or more elements was resized" in str(caught[0].message)


def _fresh_process_draws(module: str) -> tuple[int, list]:
    code = f"import {module} as t; print(t.initial_seed()); print(t.rand(3).tolist())"
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    return int(lines[0]), lines[1]


def test_default_generator_is_seeded_from_the_os_at_start_up():
    tg_runs = [_fresh_process_draws("tracegrad") for _ in range(2)]
    torch_runs = [_fresh_process_draws("torch") for _ in range(2)]
    for runs in (tg_runs, torch_runs):
        assert runs[0] != runs[1]
        assert all(0 <= seed < 2**64 for seed, _ in runs)


def test_new_generators_start_from_the_fixed_default_seed():
    assert tg.Generator().initial_seed() == torch.Generator().initial_seed() == 67280421310721
    assert tg.rand(3, generator=tg.Generator()).tolist() == torch.rand(3, generator=torch.Generator()).tolist()


def test_seed_draws_from_all_64_bits():
    seeds = [tg.seed() for _ in range(200)] + [tg.Generator().seed() for _ in range(200)]
    assert max(seeds).bit_length() == 64 and min(seeds) >= 0
    assert tg.initial_seed() == seeds[199]
    torch.manual_seed(seeds[-1])
    tg.manual_seed(seeds[-1])
    assert tg.randn(4).tolist() == torch.randn(4).tolist()
