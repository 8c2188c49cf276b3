"""PTO codegen: one well-formed `.pto` per AIC / AIV kernel, in the reference's order and spellings."""

import re

import pytest

from pypto import ir
from pypto.codegen.pto import all_emitters, generate, generate_function, lowered_away_ops
from pypto.codegen.pto.verify import check_well_formed
from pypto.ir.ops import all_ops

from tests.codegen.programs import ColumnVector, Rank3, RuntimeValidRows, DynamicRows, LoopCarries, ManyOps, MixedMatmulRelu, WhileCount

# Instruction names as the reference's PTO backend spells them (src/backend/common/pto_ops_*.cpp).
REFERENCE_OPS = {
    "pto.make_tensor_view", "pto.partition_view", "pto.alloc_tile", "pto.tload", "pto.tstore", "pto.tmov",
    "pto.subview", "pto.treshape", "pto.textract", "pto.ttrans", "pto.tgetval", "pto.tsetval", "pto.load_scalar",
    "pto.store_scalar", "pto.tadd", "pto.tsub", "pto.tmul", "pto.tdiv", "pto.tmax", "pto.tmin", "pto.tadds",
    "pto.tsubs", "pto.tmuls", "pto.tdivs", "pto.tmaxs", "pto.tmins", "pto.texp", "pto.tlog", "pto.tsqrt",
    "pto.trsqrt", "pto.trecip", "pto.tneg", "pto.tabs", "pto.trelu", "pto.tand", "pto.tor", "pto.txor", "pto.tshl",
    "pto.tshr", "pto.tnot", "pto.tands", "pto.tors", "pto.txors", "pto.tshls", "pto.tshrs", "pto.trem", "pto.trems",
    "pto.tfmod", "pto.tfmods", "pto.tlrelu", "pto.tprelu", "pto.tcvt", "pto.tcmp", "pto.tcmps", "pto.trowsum",
    "pto.trowmax", "pto.trowmin", "pto.trowprod", "pto.tcolsum", "pto.tcolmax", "pto.tcolmin", "pto.tcolprod",
    "pto.trowexpand", "pto.tcolexpand", "pto.texpands", "pto.tfillpad", "pto.tconcat", "pto.tsel", "pto.tsels",
    "pto.tmatmul", "pto.tmatmul.acc", "pto.tmatmul.bias", "pto.barrier", "pto.fence.barrier_all",
    "pto.tpush_to_aiv", "pto.tpush_to_aic", "pto.tpop_from_aic", "pto.tpop_from_aiv", "pto.tfree_from_aic",
    "pto.tfree_from_aiv", "pto.aic_initialize_pipe", "pto.aiv_initialize_pipe", "pto.reserve_buffer",
    "pto.import_reserved_buffer", "pto.tgemv", "pto.tgemv.acc", "pto.tgemv.bias", "pto.tci", "pto.tscatter",
    *(f"pto.trowexpand{k}" for k in ("add", "sub", "mul", "div", "max", "min", "expdif")),
    *(f"pto.tcolexpand{k}" for k in ("add", "sub", "mul", "div", "max", "min", "expdif")),
}
STRUCTURE = {"module", "func.func", "return", "scf.for", "scf.if", "scf.yield", "scf.while", "scf.condition", "}"}


def mnemonics(text: str) -> set:
    out = set()
    for line in text.splitlines():
        s = re.sub(r"^\s*(%[\w.$-]+\s*,\s*)*%[\w.$-]+\s*=\s*", "", line.strip())
        if s and not s.startswith("^bb"):
            out.add(re.split(r"[\s(]", s, maxsplit=1)[0])
    return out


def assert_reference_module(text: str) -> None:
    assert check_well_formed(text) == []
    unknown = {m for m in mnemonics(text) if m not in REFERENCE_OPS | STRUCTURE
               and not m.startswith(("arith.", "math."))}
    assert not unknown, f"non-reference spellings: {unknown}"


def test_every_registered_op_has_an_emitter_or_a_reason():
    emitters, away = all_emitters(), lowered_away_ops()
    missing = sorted(n for n in all_ops() if n not in emitters and n not in away)
    assert missing == [], (f"ops without a PTO emitter or a lowered-away reason: {missing}; add them to "
                           "pypto/codegen/pto/<family>.py with emits(...), lowered_away(...) or not_emitted(...)")
    assert all(len(reason) > 20 for reason in away.values())
    assert not set(emitters) & set(away)


def test_ops_without_a_spelling_are_named_not_guessed():
    from pypto.codegen.pto.registry import not_emitted_ops
    gaps = not_emitted_ops()
    assert set(gaps) <= set(all_emitters())
    for name, reason in gaps.items():
        assert reason, name


def test_cross_core_emitters_are_keyed_by_reference_names():
    names = {"tile.tpush_to_aiv", "tile.tpush_to_aic", "tile.tpop_from_aic", "tile.tpop_from_aiv",
             "system.tfree_to_aic", "system.tfree_to_aiv", "system.aic_initialize_pipe",
             "system.aiv_initialize_pipe", "system.reserve_buffer", "system.import_peer_buffer"}
    assert names <= set(all_emitters())


def test_mixed_kernel_writes_one_pto_per_core(tmp_path):
    compiled = ir.compile(MixedMatmulRelu, output_dir=tmp_path)
    files = sorted(p.name for p in (tmp_path / "ptoas").glob("*.pto"))
    assert files == ["mm_aic.pto", "mm_aiv.pto"]
    aic, aiv = ((tmp_path / "ptoas" / f).read_text() for f in files)
    for text in (aic, aiv):
        assert_reference_module(text)
        assert text.startswith('module attributes {pto.target_arch = "a2a3"} {')
    assert "#pto.kernel_kind<cube>" in aic and "#pto.kernel_kind<vector>" in aiv
    assert "pto.tmatmul ins(%x_left, %y_right" in aic
    assert re.search(r"pto\.tpush_to_aiv\(%z_tile : !pto\.tile_buf<loc=acc, dtype=f32, rows=16, cols=128, .*\) "
                     r"\{split = 0\}", aic)
    assert re.search(r"%c2v_import = pto\.import_reserved_buffer \{name = \"mm_c2v_slot_buffer\", "
                     r"peer_func = @mm_aiv\} -> i32", aic)
    assert "pto.aic_initialize_pipe {dir_mask = 1, slot_size = 8192, slot_num = 2} (gm_slot_buffer = %arg3 : " \
           "!pto.ptr<f32>, c2v_consumer_buf = " in aic                # a2a3: the ring lives in __gm_pipe_buffer
    # a2a3 dual dispatch: the pop's valid rows are 16 x (1 - lane), set at run time
    assert re.search(r"%z_vec = pto\.tpop_from_aic\(%\w+, %c128_index\) \{split = 0\} -> !pto\.tile_buf<loc=vec.*"
                     r"v_row=\?, v_col=128", aiv)
    assert "pto.tfree_from_aic {split = 0}" in aiv
    assert "location = #pto.address_space<vec>" in aiv
    assert not re.search(r"%z_vec = pto\.alloc_tile", aiv)        # the popped tile is the ring slot itself
    assert compiled.lowered.functions["mm"].func_type.name == "Group"


def test_emission_order_and_source_locations():
    text = generate(ir.compile(MixedMatmulRelu).lowered)["mm_aiv"]
    first = {key: text.index(key) for key in ("arith.constant", "pto.make_tensor_view", "pto.alloc_tile",
                                                "pto.reserve_buffer")}
    assert first["arith.constant"] < first["pto.make_tensor_view"] < first["pto.alloc_tile"] < \
        first["pto.reserve_buffer"]
    assert re.search(r'pto\.trelu ins\(%z_vec : .*\) outs\(%r : .*\) loc\(".*programs\.py":\d+:\d+\)', text)
    assert "%arg0: !pto.ptr<bf16>, %arg1: !pto.ptr<bf16>, %arg2: !pto.ptr<f32>" in text


def test_loops_carry_scalars_and_share_tile_buffers():
    lowered = ir.compile(LoopCarries).lowered
    text = generate(lowered)["k"]
    assert_reference_module(text)
    assert re.search(r"%\w+ = scf\.for %i = %c0_index to %c4_index step %c1_index iter_args\(%s = %cst\) "
                     r"-> \(f32\) \{", text)
    assert re.search(r"scf\.yield %\w+ : f32", text)
    assert "scf.if" in text and "} else {" in text
    # one pto.alloc_tile per planned buffer and tile type: the carry, its yields and results share a handle
    from pypto.ir.printer import python_print
    kernel_ir = python_print(lowered.functions["k"])
    assert text.count("pto.alloc_tile") == kernel_ir.count("pl.tile.alloc(")
    assert "pto.tmov" in text                          # a branch yielding another buffer copies into the result


def test_views_scalars_and_spmd_identity():
    text = generate(ir.compile(ManyOps).lowered)["k"]
    assert_reference_module(text)
    assert "%__pypto_spmd_block_idx: i32, %__pypto_spmd_block_num: i32)" in text
    assert "arith.index_cast %__pypto_spmd_block_idx : i32 to index" in text
    assert re.search(r"%sl = pto\.subview %\w+\[%c32_index, %c0_index\] sizes \[32, 64\] : ", text)
    assert "{rmode = #pto<round_mode ROUND>}" in text
    assert re.search(r"%v = pto\.tgetval ins\(%\w+, %\w+ : !pto\.tile_buf<.*>, index\) outs : f32", text)
    assert "pto.trowexpandsub" in text and "pto.trowmax" in text


def test_while_loop_is_scf_while_with_its_carries():
    text = generate(ir.compile(WhileCount).lowered)["k"]
    assert_reference_module(text)
    assert re.search(r"%\w+ = scf\.while \(%i = %c0_index\) : \(index\) -> \(index\) \{", text)
    assert re.search(r"scf\.condition\(%\w+\) %i : index", text)
    assert re.search(r"\} do \{\n\s+\^bb0\(%\w+: index\):", text)


def test_column_vector_tensor_is_a_dn_view():
    text = generate(ir.compile(ColumnVector).lowered)["k"]
    assert_reference_module(text)
    assert ("pto.make_tensor_view %arg1, shape = [%c64_index, %c1_index], strides = [%c1_index, %c64_index] "
            "{layout = #pto.layout<dn>}") in text
    assert "pto.make_tensor_view %arg0, shape = [%c64_index, %c64_index], strides = [%c64_index, %c1_index] " \
           "{layout = #pto.layout<nd>}" in text
    assert "pto.trowsum ins(%t, %tmp" in text


def test_rank3_tensors_load_into_flattened_tile_buffers():
    text = generate(ir.compile(Rank3).lowered)["main_incore_0"]
    assert_reference_module(text)
    assert "-> !pto.partition_tensor_view<2x16x32xf32>" in text and "!pto.tensor_view<?x?x?xf32>" in text
    assert re.search(r"pto\.tload ins\(%\w+ : !pto\.partition_tensor_view<2x16x32xf32>\) outs\(%\w+ : "
                     r"!pto\.tile_buf<loc=vec, dtype=f32, rows=32, cols=32, v_row=32, v_col=32,", text)


def test_runtime_valid_shape_reaches_alloc_and_partition():
    text = generate(ir.compile(RuntimeValidRows).lowered)["k"]
    assert_reference_module(text)
    assert re.search(r"= pto\.alloc_tile addr = %c0_i64 valid_row = %arg2 valid_col = %c64_index : "
                     r"!pto\.tile_buf<loc=vec, dtype=f32, rows=64, cols=64, v_row=\?, v_col=64,", text)
    assert "sizes = [%arg2, %c64_index] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<?x64xf32>" in text


def test_signature_orders_tensors_scalars_then_dynamic_dims():
    text = generate(ir.compile(DynamicRows).lowered)["k"]
    assert_reference_module(text)
    assert "func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: index, %arg3: index)" in text
    assert "pto.make_tensor_view %arg0, shape = [%arg3, %c64_index]" in text      # M arrives as %arg3
    assert "scf.for %i = %c0_index to %arg2 step %c1_index {" in text             # n is %arg2
    assert text.count("pto.partition_view %out_view") == 1                        # the tensor carry keeps its view


def test_generate_function_is_one_module_per_kernel():
    lowered = ir.compile(LoopCarries).lowered
    text = generate_function(lowered.functions["k"], arch="a5")
    assert text.count("func.func") == 1 and 'pto.target_arch = "a5"' in text
    assert "main" not in generate(lowered)            # orchestration functions get no .pto


def test_well_formedness_check_finds_real_problems():
    good = "module {\n  func.func @f(%arg0: i32) {\n    %a = arith.addi %arg0, %arg0 : i32\n    return\n  }\n}"
    assert check_well_formed(good) == []
    assert check_well_formed(good.replace("%arg0, %arg0", "%arg0, %b")) == ["line 3: %b used before its definition"]
    assert "never closed" in check_well_formed(good[:-1])[0]
    escaped = ("module {\n  func.func @f(%arg0: index) {\n    scf.for %i = %arg0 to %arg0 step %arg0 {\n"
               "      %t = arith.addi %i, %i : index\n    }\n    %u = arith.addi %t, %i : index\n    return\n  }\n}")
    problems = check_well_formed(escaped)
    assert "line 6: %t used before its definition" in problems and "line 6: %i used before its definition" in problems
    twice = good.replace("    return", "    %a = arith.addi %arg0, %arg0 : i32\n    return")
    assert check_well_formed(twice) == ["line 4: %a is defined twice"]


def test_unsupported_construct_is_named():
    from pypto.errors import UnsupportedError
    from pypto.codegen.pto import function_emitter
    lowered = ir.compile(LoopCarries).lowered
    with pytest.raises(UnsupportedError, match="no PTO emitter"):
        saved = function_emitter.emitter_for
        function_emitter.emitter_for = lambda name: None if name == "tile.add" else saved(name)
        try:
            generate(lowered)
        finally:
            function_emitter.emitter_for = saved


def test_transposed_gather_row_reads_through_a_dn_view():
    from tests.runtime.test_tensor_level_transposed_l1 import GatherTransposed
    texts = generate(ir.compile(GatherTransposed).lowered)
    text = next(t for t in texts.values() if "gather_row_view" in t)
    assert_reference_module(text)
    assert re.search(r"%pool_dn_view = pto\.make_tensor_view %arg0, shape = \[%c64_index, %c256_index\], "
                     r"strides = \[%c1_index, %c64_index\] \{layout = #pto\.layout<dn>\}", text)
    assert re.search(r"pto\.tload ins\(%pview : !pto\.partition_tensor_view<64x64xf32>\) outs\(%gather_row_view : "
                     r"!pto\.tile_buf<loc=mat, dtype=f32, rows=64, cols=64, v_row=64, v_col=64, blayout=\w+, "
                     r"slayout=col_major", text)
