"""PyTorch's "Autograd mechanics" note (saved tensors) and its "Hooks for saved tensors" tutorial, run under
tracegrad and torch.

Each program follows the document: reading ``grad_fn._saved_*`` before and after backward, hooks on one raw
saved tensor (``_raw_saved_self.register_hooks``) and on every saved tensor
(``torch.autograd.graph.saved_tensors_hooks``, nested, offloading to files, ``save_on_cpu``), and the errors the
tutorial warns about. What each shows (values, reprs, hook calls, errors, warnings) must be torch's.

Differences these programs found, now fixed: the pack hook given to ``register_hooks`` receives the saved
value without history (PyTorch detaches it); ``register_hooks`` called twice and the in-place check of a
pack hook use torch's words; non-callable hooks are refused as torch's binding refuses them (for
``saved_tensors_hooks``, on entering the block); ``SavedTensor`` is ``torch._C._autograd.SavedTensor`` and
prints so; inference tensors saved for backward raise torch 2.13's message; ``_raw_saved_<name>`` of a value
the node did not save (``(x * 2).grad_fn._raw_saved_self``) is a ``SavedTensor`` holding None, and of a number
one holding its wrapped-number tensor.
"""

from __future__ import annotations

import os
import tempfile
import uuid

import numpy as np
import pytest
from _lib import tg, torch
from _tutorial_lib import assert_same_transcript, transcript


def _x(lib, n=5, seed=0):
    return lib.tensor(np.random.default_rng(seed).uniform(0.5, 1.5, n), requires_grad=True)


def test_saved_self_and_saved_result_as_the_note_shows():
    def program(lib, show):
        x = _x(lib)
        y = x.pow(2)
        show(x.equal(y.grad_fn._saved_self), x is y.grad_fn._saved_self)
        y = x.exp()
        show(y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result, y.grad_fn._saved_result.grad_fn)
        show(y.grad_fn._raw_saved_result, type(y.grad_fn._raw_saved_result).__module__)
        show(y.grad_fn._raw_saved_result.data)
        y = x.sin()
        show(y.grad_fn._saved_self)
        y.sum().backward()
        show(x.grad)
        y.grad_fn._saved_self  # freed by backward

    log = assert_same_transcript(program)
    assert log[0] == (("text", "True"), ("text", "True"))
    assert log[-1][0][0] == "raised" and "Trying to backward through the graph a second time" in log[-1][0][2]


def test_saved_tensor_class_lives_in_torch_c_autograd():
    assert tg._C._autograd.SavedTensor.__module__.replace("tracegrad", "torch") == "torch._C._autograd"
    y = _x(tg).sin()
    assert type(y.grad_fn._raw_saved_self) is tg._C._autograd.SavedTensor
    with pytest.raises(RuntimeError, match="Trying to create a SavedTensor object from Python is forbidden"):
        tg._C._autograd.SavedTensor()


@pytest.mark.parametrize("what", ["input", "non-leaf input", "output"])
def test_hooks_on_one_raw_saved_tensor(what):
    """The pack hook gets the saved value without history; the unpacked value has its history back."""

    def program(lib, show):
        x = _x(lib)
        a = x if what == "input" else x * 3
        y = a.exp() if what == "output" else a.pow(2)
        raw = y.grad_fn._raw_saved_result if what == "output" else y.grad_fn._raw_saved_self

        def pack_hook(t):
            show("pack", t, t.requires_grad, t.grad_fn, t._version)
            return ("packed", t * 1)

        def unpack_hook(packed):
            show("unpack", packed[0], packed[1])
            return packed[1]

        raw.register_hooks(pack_hook, unpack_hook)
        show("registered")
        saved = y.grad_fn._saved_result if what == "output" else y.grad_fn._saved_self
        show(saved, saved.grad_fn, saved is a)
        y.sum().backward()
        show(x.grad)

    assert_same_transcript(program)


@pytest.mark.parametrize("case", ["twice", "after_context_hooks", "after_backward", "not_callable",
                                  "pack_modifies_input", "unpack_returns_int"])
def test_register_hooks_refusals(case):
    def program(lib, show):
        x = _x(lib)
        if case == "after_context_hooks":
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                y = x.pow(2)
        else:
            y = (x * 1).pow(2)
        raw = y.grad_fn._raw_saved_self
        if case == "twice":
            raw.register_hooks(lambda t: t, lambda t: t)
        if case == "after_backward":
            y.sum().backward()
        if case == "not_callable":
            raw.register_hooks(1, lambda t: t)
        elif case == "pack_modifies_input":
            raw.register_hooks(lambda t: t.mul_(2), lambda t: t)
        elif case == "unpack_returns_int":
            raw.register_hooks(lambda t: t, lambda t: 5)
            y.grad_fn._saved_self
        else:
            raw.register_hooks(lambda t: t, lambda t: t)

    log = assert_same_transcript(program)
    assert log[-1][0][0] == "raised"


def test_saved_tensors_hooks_print_every_pack_and_unpack():
    def program(lib, show):
        def pack_hook(x):
            show("Packing", repr(x))
            return x

        def unpack_hook(x):
            show("Unpacking", repr(x))
            return x

        a = lib.ones(5, requires_grad=True)
        b = lib.ones(5, requires_grad=True) * 2
        with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            y = a * b
        y.sum().backward()
        with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            z = (a * a).pow(2).sin()
        z.sum().backward()
        show(a.grad, b.grad)

    log = assert_same_transcript(program)
    assert log[0][0] == ("text", "Packing")


def test_nested_saved_tensors_hooks_innermost_pair_wins():
    def program(lib, show):
        def hooks(tag):
            return (lambda x: (show("pack", tag, tuple(x.shape)), (tag, x))[1],
                    lambda packed: (show("unpack", tag, packed[0]), packed[1])[1])

        a = _x(lib, 3)
        with lib.autograd.graph.saved_tensors_hooks(*hooks("outer")):
            y = a.exp()
            with lib.autograd.graph.saved_tensors_hooks(*hooks("inner")):
                z = y.log()
            w = z * y
        w.sum().backward()
        show(a.grad)

    assert_same_transcript(program)


def test_saving_to_disk_and_to_cpu():
    """The tutorial's two offloading examples: tensors saved to temporary files, and ``save_on_cpu``."""

    def program(lib, show):
        tmp_dir = tempfile.mkdtemp()

        class SelfDeletingTempFile:
            def __init__(self):
                self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

            def __del__(self):
                os.remove(self.name)

        def pack_hook(tensor):
            temp_file = SelfDeletingTempFile()
            lib.save(tensor, temp_file.name)
            return temp_file

        def unpack_hook(temp_file):
            return lib.load(temp_file.name, weights_only=True)

        x = _x(lib)
        with lib.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            y = x.pow(2)
        show(y.grad_fn._saved_self, y.grad_fn._saved_self.equal(x), len(os.listdir(tmp_dir)))
        y.sum().backward()
        show(x.grad, len(os.listdir(tmp_dir)))  # freed by backward: the file is gone
        with lib.autograd.graph.save_on_cpu(pin_memory=False):
            z = (x * x).sin()
        show(z.grad_fn._saved_self, z.grad_fn._raw_saved_self)
        z.sum().backward()
        show(x.grad)

    assert_same_transcript(program)


@pytest.mark.parametrize("case", ["pack_modifies_input", "unpack_returns_str", "unpack_wrong_shape",
                                  "hooks_not_callable", "disabled"])
def test_saved_tensors_hooks_errors(case):
    def program(lib, show):
        a = _x(lib, 3) * 1
        pack, unpack = (lambda t: t), (lambda t: t)
        if case == "pack_modifies_input":
            def pack(t):
                with lib.no_grad():
                    t.mul_(2)
                return t
        elif case == "unpack_returns_str":
            unpack = lambda t: "x"
        elif case == "unpack_wrong_shape":
            unpack = lambda t: lib.ones(4, dtype=t.dtype)
        elif case == "hooks_not_callable":
            pack, unpack = 1, 2
        if case == "disabled":
            with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here, please"), \
                    lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                pass
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            show("entered")
            y = a.sin()
        y.sum().backward()

    log = assert_same_transcript(program)
    assert log[-1][0][0] == "raised"
    if case == "hooks_not_callable":  # refused on entering the block, before any tensor is saved
        assert len(log) == 1


def test_inference_tensor_saved_for_backward():
    def program(lib, show):
        with lib.inference_mode():
            z = lib.ones(2)
        x = lib.ones(2, requires_grad=True)
        show(z.requires_grad, z.is_inference())
        x * z

    log = transcript(torch, program)
    assert log == transcript(tg, program)
    assert "torch.no_grad()" in log[-1][0][2]


def test_raw_saved_values_that_are_none_or_numbers():
    def program(lib, show):
        x = _x(lib)
        node = (x * 2).grad_fn
        raw_self, raw_other = node._raw_saved_self, node._raw_saved_other
        show(type(raw_self).__name__, type(raw_other).__name__, node._saved_self, node._saved_other)
        calls = []
        raw_other.register_hooks(lambda t: calls.append("pack") or t, lambda t: t)
        show(calls)
        raw_self.register_hooks(lambda t: t, lambda t: t)

    assert_same_transcript(transcript(tg, program), transcript(torch, program))
