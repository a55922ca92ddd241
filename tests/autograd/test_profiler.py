"""The autograd profiler (``autograd.profiler.profile``, ``record_function``) and ``torch.profiler``.

Area O of seed 004 (the inventory marks it "adaptation only"). Ported: test_profiler, test_profiler_seq_nr,
test_record_function, test_record_function_callbacks, test_record_function_multithreaded,
test_profiler_aggregation_fake, test_profiler_aggregation_table, test_profiler_function_event_avg,
test_profiler_shapes. Adaptation: ``use_kineto`` is accepted and changes nothing (one tracer, host time only).

Skipped (inventory N): test_profiler_unboxed_only (``resize_``, which tracegrad does not have),
test_profiler_propagation (TorchScript fork/wait), test_record_function_legacy (``torch.ops.profiler``),
test_profiler_aggregation_lstm (``nn.LSTM``).

Beyond the seed, torch is the oracle: the same programs run under both profilers must show the same
top-level operators, ``record_function`` ranges and backward-node ranges, in the same order, with the same
sequence numbers (relative to the first) and parents.
"""

from __future__ import annotations

import json
import warnings

import pytest
from _lib import tg, torch

import tracegrad
from tracegrad._state import STATE

profile, record_function = tg.autograd.profiler.profile, tg.autograd.profiler.record_function
EventList, FunctionEvent = tg.autograd.profiler_util.EventList, tg.autograd.profiler_util.FunctionEvent
FunctionEventAvg, _format_time = tg.autograd.profiler_util.FunctionEventAvg, tg.autograd.profiler_util._format_time

# ---- seed 004, area O ----------------------------------------------------------------------------------------


def test_profiler_records_operators_and_reports_itself_enabled():
    x = tg.randn(10, 10)
    with profile(use_kineto=True) as p:
        assert tg.autograd._profiler_enabled()
        x * 2 + 4
    assert not tg.autograd._profiler_enabled()
    names = {evt.name for evt in p.function_events}
    assert {"aten::mul", "aten::add"} <= names


def test_sequence_numbers_link_operators_to_their_backward_nodes():
    with profile() as p:
        x = tg.randn(10, 10, requires_grad=True)
        y = tg.randn(10, 10, requires_grad=True)
        z = x + y
        s = z.sum(dim=None)
        s.backward()
    p.key_averages().table(sort_by="self_cpu_time_total", row_limit=-1)
    found = {("aten::add", "Add"): [], ("aten::sum", "Sum"): []}
    accumulate, found_empty = [], False
    for evt in p.function_events:
        for (fwd, bwd), events in found.items():
            if evt.name == fwd or (bwd in evt.name and "Backward" in evt.name):
                events.append(evt)
        if "AccumulateGrad" in evt.name:
            accumulate.append(evt)
        if evt.name == "aten::empty":  # nested inside randn: no sequence number
            assert evt.sequence_nr == -1
            found_empty = True
    for idx, ((fwd, bwd), events) in enumerate(found.items()):
        assert [evt.name for evt in events] == [
            fwd, f"autograd::engine::evaluate_function: {bwd}Backward{idx}", f"{bwd}Backward{idx}"]
        assert events[0].sequence_nr >= 0
        assert events[1].sequence_nr == events[2].sequence_nr == events[0].sequence_nr
        assert events[0].fwd_thread == 0
        assert events[1].fwd_thread == events[2].fwd_thread == events[0].thread
    assert found_empty
    assert len(accumulate) == 4 and all(evt.sequence_nr == -1 for evt in accumulate)


def _forward(x):
    with record_function("outer"):
        y = x * 2 + 4
        with record_function("inner"):
            y = y - 1
    return y / 1


def test_record_function_ranges_appear_in_order_around_their_operators():
    x = tg.randn(10, 10)
    _forward(x)  # outside a profiler, record_function does nothing
    with profile() as p:
        _forward(x)
    expected = ["outer", "aten::mul", "aten::add", "inner", "aten::sub", "aten::div"]
    seen = [evt.name for evt in p.function_events if evt.name in expected]
    assert seen == expected
    parents = {evt.name: evt.cpu_parent.name if evt.cpu_parent else None for evt in p.function_events}
    assert parents == {"outer": None, "aten::mul": "outer", "aten::add": "outer", "inner": "outer",
                       "aten::sub": "inner", "aten::div": None}
    assert all(evt.is_user_annotation == (evt.name in ("outer", "inner")) for evt in p.function_events)


def test_record_function_decorates_functions():
    @record_function("my_func")
    def f(x, y):
        return x + y

    with profile() as p:
        assert f(1, 2) == 3
        assert f(3, 4) == 7
    assert "my_func" in str(p)
    assert [evt.name for evt in p.function_events] == ["my_func", "my_func"]
    assert f.__name__ == "f"


def test_record_function_range_is_counted_once():
    x = tg.randn(10, 10)
    with profile() as p, record_function("foo"):
        x * 2 + 4
    foo = next(evt for evt in p.function_events if "foo" in evt.name)
    assert foo.count == 1


def test_record_function_ranges_may_end_out_of_order():
    outer = record_function("outer")
    outer.__enter__()
    with record_function("inner"):
        outer.__exit__(None, None, None)  # ends before the range that began after it: no error
    with record_function("inner"):
        outer.__enter__()
    outer.__exit__(None, None, None)
    with profile() as p:
        rf = record_function("a")
        rf.__enter__()
        with record_function("b"):
            rf.__exit__(None, None, None)
    a, b = p.function_events
    assert (a.name, b.name) == ("a", "b")
    assert a.time_range.end <= b.time_range.end and b.cpu_parent is None  # b outlives a: not its child


def test_cpu_children_from_fake_events():
    events = EventList()
    ids = iter(range(1, 100))
    # per thread, (start, end) ranges: thread 0's [1, 3] pushes [0, 2] out, then takes [1, 2] as its child
    for thread, ranges in [(1, [(0, 1), (1, 2)]), (0, [(0, 2), (1, 2), (1, 3)])]:
        for start, end in ranges:
            events.append(FunctionEvent(id=next(ids), node_id=0, name="", thread=thread, start_us=start,
                                        end_us=end))
    events._populate_cpu_children()
    assert [[child.id for child in evt.cpu_children] for evt in events] == [[], [], [], [], [4]]


def test_str_of_a_profile_is_its_table():
    x = tg.randn(1024)
    with profile() as prof:
        tg.einsum("i->", x)
    assert str(prof) == prof.table()
    assert "aten::einsum" in str(prof)


def test_function_event_average():
    avg = FunctionEventAvg()
    avg.add(FunctionEvent(id=0, node_id=0, name="foo", thread=0, start_us=10, end_us=15))
    avg.add(FunctionEvent(id=1, node_id=0, name="foo", thread=0, start_us=20, end_us=30))
    avg.add(avg)
    assert avg.key == "foo"
    assert (avg.count, avg.cpu_time_total, avg.self_cpu_time_total, avg.device_time_total) == (4, 30, 30, 0)
    assert avg.cpu_time == 7.5
    with pytest.raises(AssertionError):
        avg.add(FunctionEvent(id=2, node_id=0, name="bar", thread=0, start_us=0, end_us=1))


def test_input_shapes_of_linear_layers():
    layer1, layer2 = tg.nn.Linear(20, 30), tg.nn.Linear(30, 40)
    x = tg.randn(128, 20)
    with profile(record_shapes=True) as prof:
        layer2(layer1(x))
    shapes = [evt.input_shapes for evt in prof.function_events if evt.name == "aten::linear"]
    assert shapes == [[[128, 20], [30, 20], [30]], [[128, 30], [40, 30], [40]]]


# ---- the same programs under torch's profiler ---------------------------------------------------------------------


def _arithmetic(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with lib.autograd.profiler.profile() as p:
        with lib.autograd.profiler.record_function("outer"):
            y = (x * 2 + 4).sum()
        y.backward()
    return p


def _mlp(lib):
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
    x, target = lib.ones(5, 4), lib.tensor([0, 1, 2, 0, 1])
    with lib.autograd.profiler.profile() as p:
        loss = lib.nn.functional.cross_entropy(model(x), target)
        loss.backward()
    return p


def _hooks(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.profiler.profile() as p:
        y = x.exp()

        def post(grad_inputs, grad_outputs):
            with lib.autograd.profiler.record_function("in_post_hook"):
                return (grad_inputs[0] * 2,)

        y.grad_fn.register_hook(post)
        y.register_hook(lambda g: None)
        (y * x).sum().backward()
    return p


def _factories(lib):
    with lib.autograd.profiler.profile() as p:
        lib.zeros(3)
        lib.ones(2, 3)
        lib.rand(2)
        lib.randn(2)
        lib.full((2,), 1.0)
        lib.randint(0, 3, (2,))
        lib.empty(2)
    return p




def _custom_function(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.profiler.profile() as p:
        Cube.apply(x.sin()).sum().backward()
    return p


def _matrices(lib):
    a = lib.ones(3, 4, requires_grad=True)
    b = lib.ones(4, 2)
    with lib.autograd.profiler.profile() as p:
        (a @ b).sum().backward()
        lib.matmul(lib.ones(2, 3, 4), b)
        lib.einsum("ij,jk->ik", a, b)
    return p


def _visible(events) -> list[tuple]:
    """What a reader of the profile sees first: top-level ranges, ``record_function`` ranges and what runs
    directly inside them, and each node's range inside its evaluate range; sequence numbers relative to the
    first one (torch's counter runs across the whole process)."""
    rows = []
    for evt in events:
        parent = evt.cpu_parent
        if (parent is None or parent.is_user_annotation or evt.is_user_annotation
                or (parent.name.startswith("autograd::engine::evaluate_function: ")
                    and evt.name == parent.name.split(": ", 1)[1])):
            rows.append((evt.name, evt.sequence_nr, parent.name if parent else None))
    first = min((seq for _, seq, _ in rows if seq >= 0), default=0)
    return [(name, seq - first if seq >= 0 else -1, parent) for name, seq, parent in rows]


@pytest.mark.parametrize("program", [_arithmetic, _mlp, _hooks, _factories, _custom_function, _matrices],
                         ids=lambda f: f.__name__.strip("_"))
def test_profile_shows_what_torch_shows(program):
    ours = _visible(program(tg).function_events)
    theirs = _visible(program(torch).function_events)
    assert ours == theirs


def test_nodes_and_forward_threads_match_torch():
    def rows(lib):
        return [(evt.name, evt.thread, evt.fwd_thread) for evt in _arithmetic(lib).function_events
                if "Backward" in evt.name or "AccumulateGrad" in evt.name]

    assert rows(tg) == rows(torch)


def test_input_shapes_match_torch():
    def shapes(lib):
        x = lib.ones(3, 4, requires_grad=True)
        with lib.autograd.profiler.profile(record_shapes=True) as p:
            (x * 2 + 1).sum().backward()
        return [(evt.name, evt.input_shapes) for evt in p.function_events
                if evt.name in ("aten::mul", "aten::add", "aten::sum") and evt.cpu_parent is None
                or "Backward0" in evt.name]

    assert shapes(tg) == shapes(torch)


# ---- what the results offer ---------------------------------------------------------------------------------------


def _mlp_profile(**options):
    model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 3))
    x, target = tg.ones(5, 4), tg.tensor([0, 1, 2, 0, 1])
    with profile(**options) as p:
        tg.nn.functional.cross_entropy(model(x), target).backward()
    return p


def test_key_averages_table_lays_out_torchs_columns():
    p = _mlp_profile()
    table = p.key_averages().table(sort_by="self_cpu_time_total", row_limit=-1)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total",
                                "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "}
    assert lines[-1].startswith("Self CPU time total: ")
    averages = p.key_averages()
    assert len(lines) == len(averages) + 5
    counts = {avg.key: avg.count for avg in averages}
    assert counts["aten::linear"] == 2 and counts["torch::autograd::AccumulateGrad"] == 4
    selfs = [avg.self_cpu_time_total for avg in sorted(averages, key=lambda a: -a.self_cpu_time_total)]
    assert [float(row.split()[-6].rstrip("%")) >= 0 for row in lines[3:-2]] and selfs == sorted(selfs, reverse=True)
    assert abs(sum(avg.self_cpu_time_total for avg in averages) - p.self_cpu_time_total) < 1e-6
    assert p.total_average().count == len(p.function_events)
    assert len(p.key_averages().table(row_limit=3).splitlines()) == 3 + 5
    assert p.table(header="HEADER").splitlines()[1] == "HEADER"
    top = p.table(top_level_events_only=True, row_limit=-1)
    assert "aten::t " not in top and "aten::linear" in top  # t runs inside linear


def test_long_names_are_clipped_to_the_name_column():
    table = _mlp_profile().key_averages().table(row_limit=-1)
    assert "autograd::engine::evaluate_function: torch::autograd..." in table


def test_group_by_input_shape_separates_calls_by_shapes():
    p = _mlp_profile(record_shapes=True)
    linear = [avg for avg in p.key_averages(group_by_input_shape=True) if avg.key == "aten::linear"]
    assert sorted(str(avg.input_shapes) for avg in linear) == ["[[5, 4], [8, 4], [8]]", "[[5, 8], [3, 8], [3]]"]
    assert "Input Shapes" in p.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" not in p.key_averages().table()


def test_profile_memory_counts_the_buffers_operators_return():
    with profile(profile_memory=True) as p:
        x = tg.randn(4, 4)  # 64 bytes of float32
        y = x * 2  # 64 more
        y.view(16)  # a view allocates nothing
    mem = {evt.name: (evt.cpu_memory_usage, evt.self_cpu_memory_usage) for evt in p.function_events}
    assert mem["aten::randn"] == (64, 0) and mem["aten::empty"] == (64, 64)
    assert mem["aten::mul"] == (64, 64) and mem["aten::view"] == (0, 0)
    assert "CPU Mem" in p.key_averages().table()


def test_profile_memory_is_inclusive_of_nested_operators():
    p = _mlp_profile(profile_memory=True)
    linear = next(evt for evt in p.function_events if evt.name == "aten::linear")
    assert linear.cpu_memory_usage == 5 * 8 * 4 and linear.self_cpu_memory_usage == 0  # its addmm allocated it
    assert all(evt.self_cpu_memory_usage >= 0 for evt in p.function_events)


def test_with_flops_counts_matrix_products():
    a, b = tg.randn(8, 16), tg.randn(16, 4)
    with profile(with_flops=True) as p:
        a @ b
        a * 2
    flops = {evt.name: evt.flops for evt in p.function_events}
    assert flops["aten::mm"] == 2 * 8 * 16 * 4 and flops["aten::mul"] == 8 * 16
    assert [evt.cpu_parent.name for evt in p.function_events if evt.name == "aten::mm"] == ["aten::matmul"]
    assert "Total MFLOPs" in p.key_averages().table()


def test_with_stack_records_the_users_line(tmp_path):
    x = tg.randn(3)
    with profile(with_stack=True) as p:
        x.exp()  # marker line
    exp = next(evt for evt in p.function_events if evt.name == "aten::exp")
    assert exp.stack and __file__ in exp.stack[0] and "test_with_stack_records_the_users_line" in exp.stack[0]
    assert all("tracegrad/src" not in frame for frame in exp.stack)
    assert "Source Location" in p.key_averages(group_by_stack_n=1).table()
    path = tmp_path / "stacks.txt"
    p.export_stacks(str(path))
    assert "test_with_stack_records_the_users_line" in path.read_text()
    with pytest.raises(AssertionError, match="with_stack=True"):
        _mlp_profile().export_stacks(str(path))


def test_chrome_trace_holds_every_event(tmp_path):
    p = _mlp_profile(record_shapes=True)
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert [event["name"] for event in trace] == [evt.name for evt in p.function_events]
    assert all(event["ph"] == "X" and event["dur"] >= 0 for event in trace)
    addmm = next(event for event in trace if event["name"] == "aten::addmm")
    assert addmm["args"]["Input Dims"][1] == [5, 4]


def test_function_event_repr_names_its_fields():
    evt = _mlp_profile().function_events[0]
    text = repr(evt)
    assert text.startswith(f"<FunctionEvent id={evt.id} name={evt.name} ") and "seq_nr=" in text
    assert _format_time(1500) == "1.500ms" and _format_time(2.5) == "2.500us" and _format_time(3e6) == "3.000s"


# ---- misuse, and leaving no trace -------------------------------------------------------------------------------


def test_results_before_the_profile_ends():
    p = profile()
    with p:
        assert str(p) == "<unfinished torch.autograd.profile>"
        with pytest.raises(RuntimeError, match="didn't finish"):
            p.key_averages()
    assert p.key_averages() is not None


def test_a_profile_is_not_reentrant_and_profiles_do_not_nest():
    p = profile()
    with p, pytest.raises(RuntimeError, match="not reentrant"):
        p.__enter__()
    with profile(), pytest.raises(RuntimeError, match="already running"):
        profile().__enter__()
    assert STATE.profiler is None


def test_disabled_profile_records_nothing():
    with profile(enabled=False) as p:
        assert not tg.autograd._profiler_enabled()
        tg.ones(2) * 2
    assert p.function_events is None and str(p) == "<unfinished torch.autograd.profile>"


def test_profiling_changes_no_result_and_restores_the_fast_paths():
    def step(profiled: bool):
        tg.manual_seed(0)
        model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 3))
        x, target = tg.randn(5, 4), tg.tensor([0, 1, 2, 0, 1])
        if profiled:
            with profile(record_shapes=True, profile_memory=True, with_stack=True, with_flops=True):
                loss = tg.nn.functional.cross_entropy(model(x), target)
                loss.backward()
        else:
            loss = tg.nn.functional.cross_entropy(model(x), target)
            loss.backward()
        return [loss.item()] + [p.grad.tolist() for p in model.parameters()]

    assert step(True) == step(False)
    assert not STATE.special and STATE.profiler is None


def test_an_error_in_backward_leaves_later_operators_top_level():
    x = tg.ones(2, requires_grad=True)
    y = x.exp()

    def failing(grad):
        raise ValueError("hook failed")

    y.register_hook(failing)
    with profile() as p:
        with pytest.raises(ValueError, match="hook failed"):
            y.sum().backward()
        x * 2
    mul = [evt for evt in p.function_events if evt.name == "aten::mul"][-1]
    assert mul.cpu_parent is None and mul.sequence_nr >= 0


def test_torch_names_for_tracegrads_fused_operators():
    from tracegrad._profiling import profiler_name
    from tracegrad.ops.nn_ops.linear import addmm_node_op, linear_backward, weight_t

    assert profiler_name(addmm_node_op) == "aten::addmm" and profiler_name(weight_t) == "aten::t"
    assert profiler_name(linear_backward) == "tracegrad::linear_backward"
    assert profiler_name(tracegrad.ops.pointwise.mul) == "aten::mul"


# ---- torch.profiler ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [dict(wait=1, warmup=1, active=2, repeat=1),
                                    dict(wait=1, warmup=1, active=2, skip_first=1),
                                    dict(wait=2, warmup=0, active=1, repeat=2, skip_first_wait=1)],
                         ids=["repeat", "skip_first", "skip_first_wait"])
def test_schedule_matches_torch(kwargs):
    def actions(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            schedule = lib.profiler.schedule(**kwargs)
        return [schedule(step).name for step in range(12)], [str(w.message) for w in caught]

    assert actions(tg) == actions(torch)


def test_scheduled_profile_hands_each_cycle_to_on_trace_ready_as_torch_does():
    def cycles(lib):
        traces = []
        x = lib.ones(2, requires_grad=True)
        schedule = lib.profiler.schedule(wait=1, warmup=1, active=2)

        def ready(prof):
            traces.append([evt.name for evt in prof.events() if evt.name in ("ProfilerStep*", "aten::mul")])

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.profiler.profile(activities=[lib.profiler.ProfilerActivity.CPU], schedule=schedule,
                                      on_trace_ready=ready) as prof:
                for _ in range(7):
                    (x * 2).sum().backward()
                    prof.step()
        return traces

    assert cycles(tg) == cycles(torch)


def test_unscheduled_profile_has_no_step_ranges(tmp_path):
    with tg.profiler.profile(record_shapes=True,
                             on_trace_ready=tg.profiler.tensorboard_trace_handler(str(tmp_path), "worker")) as prof:
        tg.ones(2) * 3
    assert [evt.name for evt in prof.events()][-1] == "aten::mul"
    assert "ProfilerStep" not in prof.key_averages().table()
    (written,) = tmp_path.iterdir()
    assert written.name.startswith("worker.") and written.name.endswith(".pt.trace.json")
    assert any(event["name"] == "aten::mul" for event in json.loads(written.read_text())["traceEvents"])


def test_record_function_is_shared_with_torch_profiler():
    assert tg.profiler.record_function is record_function
    with tg.profiler.profile() as prof, tg.profiler.record_function("block"):
        tg.ones(1) + 1
    assert [evt.name for evt in prof.events()][0] == "block"
