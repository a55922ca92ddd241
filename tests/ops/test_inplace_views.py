"""In-place view methods (``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``, ``swapdims_``, ``swapaxes_``,
``as_strided_``) against PyTorch: each overload records its own node class (SqueezeBackward3/4/5,
UnsqueezeBackward1, TBackward1, TransposeBackward1, AsStridedBackward1) and *sets* the tensor's history (an
in-place view of a view leaves its base's history alone); versions, ``_base``, errors and forward-mode
tangents are torch's."""

from __future__ import annotations

import pytest
from _lib import np, recorded_graph, run_both

VALUES = np.random.default_rng(0).random((3, 1, 4))

INPLACE = {
    "squeeze_": lambda x: x.squeeze_(),
    "squeeze_dim": lambda x: x.squeeze_(1),
    "squeeze_dim_kw": lambda x: x.squeeze_(dim=-2),
    "squeeze_dims": lambda x: x.squeeze_((1,)),
    "unsqueeze_": lambda x: x.unsqueeze_(0),
    "unsqueeze_last": lambda x: x.unsqueeze_(-1),
    "t_": lambda x: x.squeeze_(1).t_(),
    "transpose_": lambda x: x.transpose_(0, 2),
    "swapdims_": lambda x: x.swapdims_(0, 1),
    "swapaxes_": lambda x: x.swapaxes_(-1, 0),
    "as_strided_": lambda x: x.as_strided_((2, 2), (1, 2)),
    "as_strided_offset": lambda x: x.as_strided_((2, 2), (1, 2), 1),
}


def _state(x) -> tuple:
    return tuple(x.shape), x.stride(), x.storage_offset(), x._version, x.is_contiguous()


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_view_of_a_nonleaf(name: str):
    """Same tensor back, torch's node (one edge, to the old history), shape, strides, version and gradient."""

    def program(lib):
        a = lib.tensor(VALUES, requires_grad=True)
        c = a.clone()
        out = INPLACE[name](c)
        graph = recorded_graph([c])
        (c * lib.arange(c.numel(), dtype=c.dtype).reshape(c.shape)).sum().backward()
        return out is c, graph, _state(c), c._is_view(), a.grad.numpy().round(6).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_view_of_a_view(name: str):
    """On a view the node is set on the view (no CopySlices on the base), which stays its ``_base``."""

    def program(lib):
        a = lib.tensor(VALUES, requires_grad=True)
        c = a.clone()
        v = c[1:]
        before = c._version
        INPLACE[name](v)
        graphs = recorded_graph([v]), recorded_graph([c])
        (v.sum() * 2 + (c * c).sum()).backward()
        return v._base is c, before, _state(v), c._version, graphs, a.grad.numpy().round(6).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


def test_a_later_write_through_the_reshaped_view_reaches_the_base():
    def program(lib):
        a = lib.tensor(VALUES[:, 0], requires_grad=True)
        c = a.clone()
        v = c[1:]
        v.t_()
        v.mul_(lib.arange(8.0, dtype=v.dtype).reshape(4, 2))
        c.sum().backward()
        return recorded_graph([c]), recorded_graph([v]), c.detach().numpy().round(6).tolist(), a.grad.tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


def test_no_grad_and_plain_tensors_bump_the_version_only():
    def program(lib):
        a = lib.tensor(VALUES, requires_grad=True)
        with lib.no_grad():
            a.squeeze_()
        b = lib.tensor(VALUES)
        b.transpose_(0, 1)
        return _state(a), a.is_leaf, a.grad_fn, _state(b), b.requires_grad

    ours, theirs = run_both(program)
    assert ours == theirs


def test_retain_grad_stays_with_the_old_history():
    """PyTorch's set_history does not move a retains_grad hook: ``.grad`` has the pre-squeeze shape."""

    def program(lib):
        a = lib.tensor(VALUES, requires_grad=True)
        c = a.clone()
        c.retain_grad()
        c.squeeze_()
        (c * 2).sum().backward()
        return tuple(c.grad.shape), c.grad.numpy().tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor(VALUES, requires_grad=True),
    lambda lib: lib.tensor(VALUES, requires_grad=True)[0],
    lambda lib: lib.tensor(VALUES, requires_grad=True).clone().squeeze(1).unbind()[0],
], ids=["leaf", "view_of_leaf", "multi_output_view"])
@pytest.mark.parametrize("name", ["squeeze_", "t_", "transpose_", "as_strided_"])
def test_errors_are_torchs(make, name: str):
    def program(lib):
        x = make(lib)
        with pytest.raises(RuntimeError) as e:
            INPLACE[name](x)
        return str(e.value), tuple(x.shape), x._version

    ours, theirs = run_both(program)
    assert ours == theirs


def test_argument_errors_are_torchs():
    def program(lib):
        errors = []
        for call in (lambda: lib.ones(2, 3, 4).t_(), lambda: lib.ones(6).as_strided_((3, 3), (1, 2), 1),
                     lambda: lib.ones(6).as_strided_((2,), (-1,))):
            with pytest.raises(RuntimeError) as e:
                call()
            errors.append(str(e.value))
        with lib.inference_mode():
            x = lib.ones(2, 1)
        with pytest.raises(RuntimeError) as e:
            x.squeeze_()
        return errors, str(e.value)

    ours, theirs = run_both(program)
    assert ours == theirs


def test_a_saved_tensor_sees_the_version_bump():
    def program(lib):
        y = lib.tensor(VALUES, requires_grad=True).clone()
        z = y.sin()
        y.squeeze_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
            z.sum().backward()
        return "is at version 1; expected version 0" in str(e.value)

    ours, theirs = run_both(program)
    assert ours == theirs


@pytest.mark.parametrize("name", INPLACE)
def test_forward_ad_transforms_the_tangent_in_place(name: str):
    """The tangent is the same object, transformed like the primal (torch: ``self_t.squeeze_()``)."""

    def program(lib):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            dual = fwad.make_dual(lib.tensor(VALUES), lib.tensor(VALUES * 10))
            before = fwad.unpack_dual(dual).tangent
            INPLACE[name](dual)
            after = fwad.unpack_dual(dual).tangent
            return after is before, tuple(after.shape), after.stride(), after.numpy().round(6).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


def test_forward_ad_through_a_view_and_a_later_write():
    def program(lib):
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            dual = fwad.make_dual(lib.tensor(VALUES), lib.tensor(VALUES * 10))
            v = dual[0]
            v.unsqueeze_(0)
            shape = tuple(fwad.unpack_dual(v).tangent.shape)
            v.mul_(2)
            return shape, fwad.unpack_dual(dual).tangent.numpy().round(6).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


def test_forward_ad_with_a_recorded_graph():
    """A dual tensor that requires grad: the node is the in-place overload's and the tangent follows."""

    def program(lib):
        fwad = lib.autograd.forward_ad
        x = lib.tensor(VALUES, requires_grad=True)
        with fwad.dual_level():
            dual = fwad.make_dual(x.clone(), lib.tensor(VALUES * 10))
            dual.squeeze_(1).t_()
            out = lib.matmul(dual[0], dual.t())  # 1-D @ 2-D ends with squeeze_(0) (SqueezeBackward4)
            tangent = fwad.unpack_dual(out).tangent
            return (recorded_graph([dual]), recorded_graph([out]), tangent.requires_grad,
                    tangent.detach().numpy().round(6).tolist())

    ours, theirs = run_both(program)
    assert ours == theirs


AS_STRIDED_OF_A_VIEW = {
    "offset_view": lambda b: b[1:, 2:].as_strided((2, 3), (3, 1), 5),
    "overlapping_output": lambda b: b[1:].as_strided((3, 3), (1, 1)),
    "strided_input": lambda b: b[:, ::2].as_strided((2, 2), (2, 1)),
    "transposed_input_zero_stride": lambda b: b.t()[1:].as_strided((4, 2), (0, 1), 3),
    "expanded_input": lambda b: b.expand(2, 4, 6)[1].as_strided((2, 2), (1, 2)),
    "offset_before_the_input": lambda b: b[2:].as_strided((2, 2), (1, 2), 0),
}


@pytest.mark.parametrize("name", AS_STRIDED_OF_A_VIEW)
def test_as_strided_gradient_is_taken_in_storage_coordinates(name: str):
    """as_strided's sizes, strides and offset address the storage, not the input view: its gradient lands
    where the output's elements lie in the storage, read back through the input's own geometry."""

    def program(lib):
        a = lib.arange(24.0, dtype=lib.float64).reshape(4, 6).requires_grad_()
        v = AS_STRIDED_OF_A_VIEW[name](a * 1)
        weights = lib.arange(float(v.numel()), dtype=lib.float64).reshape(v.shape) + 1
        (v * weights).sum().backward()
        return a.grad.numpy().tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


SAVED_ATTRIBUTE_PROGRAMS = {
    "squeeze": lambda x: x.squeeze(),
    "squeeze_dim": lambda x: x.squeeze(1),
    "squeeze_negative_dim": lambda x: x.squeeze(-2),
    "squeeze_dims": lambda x: x.squeeze((1,)),
    "squeeze_negative_dims": lambda x: x.squeeze([1, -1]),
    "squeeze_0d": lambda x: x.sum().squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(3),
    "unsqueeze_negative": lambda x: x.unsqueeze(-1),
    "transpose_negative": lambda x: x.transpose(0, -1),
    "swapaxes": lambda x: x.swapaxes(2, 1),
    "t": lambda x: x.squeeze().t(),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 2), 1),
    "squeeze_dim_": lambda x: x.clone().squeeze_(1),
    "squeeze_negative_dim_": lambda x: x.clone().squeeze_(-2),
    "unsqueeze_": lambda x: x.clone().unsqueeze_(0),
    "unsqueeze_negative_": lambda x: x.clone().unsqueeze_(-1),
    "transpose_": lambda x: x.clone().transpose_(0, 2),
    "swapdims_negative_": lambda x: x.clone().swapdims_(1, -1),
    "squeeze_all_": lambda x: x.clone().squeeze_(),
    "squeeze_dims_": lambda x: x.clone().squeeze_((1,)),
    "squeeze_negative_dims_": lambda x: x.clone().squeeze_((1, -1)),
    "t_": lambda x: x.clone().squeeze_().t_(),
    "as_strided_": lambda x: x.clone().as_strided_((2, 2), (1, 2), 1),
    "as_strided_no_offset_": lambda x: x.clone().as_strided_((2, 2), (1, 2)),
    "flip_negative_dims": lambda x: x.flip(-1),
    "select_negative": lambda x: x[:, :, -1],
    "slice_open_end": lambda x: x[1:],
    "slice_step": lambda x: x[::2],
    "slice_negative_end": lambda x: x[:, :, 1:-1],
    "narrow": lambda x: x.narrow(2, 1, 2),
    "split": lambda x: x.split(2, 2)[1],
}


@pytest.mark.parametrize("name", SAVED_ATTRIBUTE_PROGRAMS)
def test_view_nodes_expose_pytorchs_saved_attributes(name: str):
    """``grad_fn._saved_dim`` and friends read back as in PyTorch, including its unsigned view of a negative
    ``int`` (``dim=-1`` is 18446744073709551615) and a one-element tuple for an ``int[]`` given one int; no
    other ``_saved`` name is listed (as_strided's input geometry has no getter in PyTorch)."""

    def program(lib):
        x = lib.ones(2, 1, 3, requires_grad=True) * 1
        fn = SAVED_ATTRIBUTE_PROGRAMS[name](x).grad_fn
        return fn.name(), {a: getattr(fn, a) for a in dir(fn) if a.startswith("_saved") and a != "_saved_self"}

    ours, theirs = run_both(program)
    assert ours == theirs


INDEXING_VIEWS = {
    "slice": lambda t: t[1:],
    "select_negative": lambda t: t[:, -1],
    "slice_of_slice": lambda t: t[::2, 1:-1],
    "narrow": lambda t: t.narrow(1, 1, 2),
    "select_of_slice": lambda t: t[0, 1:3],
    "split": lambda t: t.split(2, 1)[1],
    "chunk": lambda t: t.chunk(2)[0],
    "unbind": lambda t: t.unbind(1)[2],
}


@pytest.mark.parametrize("name", INDEXING_VIEWS)
def test_indexing_view_gradients_are_pytorchs_operators(name: str):
    """select's and slice's gradients are PyTorch's select_backward / slice_backward (SelectBackwardBackward0,
    SliceBackwardBackward0, with its missing start and end as 0 and INT64_MAX), split's a cat; the nodes'
    saved attributes read back as torch's (the cat keeps its inputs' sizes without a getter)."""

    def program(lib):
        x = lib.ones(3, 4, requires_grad=True)
        y = INDEXING_VIEWS[name](x)
        v = lib.ones(y.shape, requires_grad=True)
        (g,) = lib.autograd.grad(y, x, v, create_graph=True)
        nodes = [(fn.name(), {a: getattr(fn, a) for a in dir(fn) if a.startswith("_saved")})
                 for fn in (y.grad_fn, g.grad_fn)]
        (g * lib.arange(12.0).reshape(3, 4)).sum().backward()
        return nodes, recorded_graph([g]), v.grad.tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


def _weights(lib, t):
    return lib.arange(1.0, t.numel() + 1, dtype=t.dtype).reshape(t.shape)


# Views made before an in-place view op reshaped their base (or a view sharing it), each program returning
# the views to check. Their place in the base is read in storage coordinates, as in PyTorch: the base's new
# geometry must not move them.
VIEWS_MADE_BEFORE: dict = {}


def _registered_in(table: dict):
    """A decorator that files a program in ``table`` under its name (the parameter ids)."""

    def register(program):
        table[program.__name__] = program
        return program

    return register


_views_made_before = _registered_in(VIEWS_MADE_BEFORE)


@_views_made_before
def base_t_(lib, c):
    v = c[1:]
    c.t_()
    return [v]


@_views_made_before
def base_t_then_write(lib, c):
    v = c[1:]
    c.t_().mul_(2)
    return [v]


@_views_made_before
def base_t_then_write_through_a_row(lib, c):
    v = c[1:]
    c.t_()[0].mul_(3)
    return [v]


@_views_made_before
def base_t_then_write_through_the_old_view(lib, c):
    v = c[1:]
    c.t_()
    v.mul_(2)
    return [v]


@_views_made_before
def base_transpose_then_flat_view_written(lib, c):
    v = c.view(12)
    c.transpose_(0, 1)
    v.mul_(2)
    return [v]


@_views_made_before
def base_as_strided_over_part_of_it(lib, c):
    v = c[1:]  # outside the base's new elements: no gradient reaches it through v
    c.as_strided_((2, 2), (1, 2))
    c.mul_(2)
    return [v]


@_views_made_before
def base_squeeze_then_transpose(lib, c):
    v = c.unsqueeze(1).select(2, 1)
    c.unsqueeze_(1).squeeze_()
    c.transpose_(0, 1)
    c.mul_(2)
    return [v]


@_views_made_before
def view_of_view_then_as_strided_on_the_middle(lib, c):
    m = c[1:]
    w = m[:, 1:]
    m.as_strided_((2, 2), (1, 2), 5)
    m.mul_(2)
    return [w, m]


@_views_made_before
def sibling_t_then_write(lib, c):
    u, v = c[:, 2:], c[1:]
    v.t_()
    v.mul_(_weights(lib, v))
    return [u, v]


@_views_made_before
def sibling_unsqueeze_then_other_written(lib, c):
    u, v = c[:, 2:], c[1:]
    v.unsqueeze_(0)
    u.mul_(2)
    return [u, v]


@pytest.mark.parametrize("name", VIEWS_MADE_BEFORE)
def test_views_made_before_an_inplace_view_op(name: str):
    """Each view's regenerated grad_fn (AsStridedBackward0 over the base, with torch's saved size, stride and
    storage offset), the graphs and the gradients are torch's."""

    def program(lib):
        a = lib.tensor(VALUES[:, 0], requires_grad=True)
        c = a.clone()
        views = VIEWS_MADE_BEFORE[name](lib, c)
        fns = [v.grad_fn for v in views]
        saved = [{k: getattr(fn, k) for k in dir(fn) if k.startswith("_saved")} for fn in fns]
        graphs = recorded_graph(views + [c])
        loss = sum((v * _weights(lib, v)).sum() for v in views) + (c * _weights(lib, c)).sum()
        loss.backward()
        return saved, graphs, [_state(v) for v in views], a.grad.numpy().round(6).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


def test_gradient_graph_through_a_write_after_t_():
    """Under create_graph the base's CopySlices gradient is torch's: a copy laid out as the (transposed)
    base, an as_strided slice of it written in place."""

    def program(lib):
        a = lib.tensor(VALUES[:, 0], requires_grad=True)
        c = a.clone()
        v = c[1:]
        c.t_()
        v.mul_(a[1:])
        (g,) = lib.autograd.grad((c * c).sum(), a, create_graph=True)
        graph = recorded_graph([g])
        g.sum().backward()
        return graph, g.detach().numpy().round(6).tolist(), a.grad.numpy().round(6).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs


def test_view_replay_is_decided_when_the_view_is_made():
    """A view made under ``_force_original_view_tracking(True)`` replays its ops when regenerated, whatever
    the mode then; one made outside it gets AsStridedBackward0 even inside it."""

    def program(lib):
        a = lib.tensor(VALUES[:, 0], requires_grad=True)
        c = a.clone()
        with lib.autograd._force_original_view_tracking(True):
            replayed = c[1:]
            of_replayed = replayed[:, 1:]
        plain = c[:, 1:]
        with lib.autograd._force_original_view_tracking(True):
            c.mul_(2)
            graphs = recorded_graph([replayed, of_replayed, plain])
        c.mul_(3)
        return graphs, recorded_graph([replayed, plain])

    ours, theirs = run_both(program)
    assert ours == theirs


def _backward_error(lib, loss) -> str:
    with pytest.raises(RuntimeError) as e:
        loss.sum().backward()
    return str(e.value)


# Saved tensors modified after an in-place view op took over their history; each program returns the
# tensor whose backward unpacks them.
MODIFIED_SAVED_TENSORS: dict = {}
_modifies_a_saved_tensor = _registered_in(MODIFIED_SAVED_TENSORS)


@_modifies_a_saved_tensor
def input_squeeze_(lib, x):
    y = x.sin()
    x.squeeze_()
    return y


@_modifies_a_saved_tensor
def input_squeeze_then_mul_(lib, x):
    y = x.sin()
    x.squeeze_().mul_(2)
    return y


@_modifies_a_saved_tensor
def input_t_(lib, x):
    y = x * x
    x.squeeze_(1).t_()
    return y


@_modifies_a_saved_tensor
def output_unsqueeze_(lib, x):
    y = x.exp()
    y.unsqueeze_(0)
    return y


@_modifies_a_saved_tensor
def output_unsqueeze_then_mul_(lib, x):
    y = x.exp()
    y.unsqueeze_(0).mul_(2)
    return y


@_modifies_a_saved_tensor
def output_as_strided_(lib, x):
    y = x.tanh()
    y.as_strided_((3,), (1,))
    return y


@_modifies_a_saved_tensor
def view_input_transpose_(lib, x):
    v = x[0]
    y = v.sin()
    v.transpose_(0, 1)
    return y


@_modifies_a_saved_tensor
def view_input_as_strided_(lib, x):
    v = x[1:]
    y = v.sin()
    v.as_strided_((2, 2), (1, 2), 1)
    return y


@_modifies_a_saved_tensor
def view_input_whose_base_was_reshaped(lib, x):
    y = x[1:].sin()  # the saved view's grad_fn is regenerated: AsStrided
    x.squeeze_(1).t_()
    return y


@_modifies_a_saved_tensor
def view_input_whose_sibling_was_squeezed(lib, x):
    y = x.squeeze(1).cos()
    x[0].squeeze_(0)
    x.mul_(2)
    return y


@_modifies_a_saved_tensor
def multi_output_view_input(lib, x):
    y = x.unbind()[1].sin()  # its grad_fn may not be regenerated: the view's error
    x.add_(1)
    return y


@_modifies_a_saved_tensor
def second_overload_input(lib, x):
    m = x.sum(0, keepdim=True)  # SumBackward1: Sum1
    y = m.sin()
    m.mul_(2)
    return y


@pytest.mark.parametrize("name", MODIFIED_SAVED_TENSORS)
def test_modified_saved_tensor_errors_are_torchs(name: str):
    """The whole message, naming the current producer as torch 2.13 does (``Squeeze3`` for SqueezeBackward3,
    ``Exp`` for ExpBackward0, ``AsStrided`` for a regenerated view), or the view's own error when its
    grad_fn may not be regenerated."""

    def program(lib):
        x = lib.tensor(VALUES, requires_grad=True).clone()
        return _backward_error(lib, MODIFIED_SAVED_TENSORS[name](lib, x))

    ours, theirs = run_both(program)
    assert ours == theirs
