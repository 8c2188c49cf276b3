"""Cross-core pipe ops: the AIC ↔ AIV transfers ExpandMixedKernel emits (or users write by hand).

A cluster's cube core and vector core(s) exchange tiles through rings of `slot_num` slots of
`slot_size` bytes. The producer pushes (blocks while the ring is full), the consumer pops
(blocks while it is empty) and must free every popped slot; `initialize_pipe` on both sides
creates the ring, `reserve_buffer` names the consumer's slot memory and `import_peer_buffer`
the producer's view of it. Split codes (0 none, 1 / 2 up-down / left-right, 3 / 4 their odd
variants) say how two AIV lanes share one slot.

    pl.tile.tpush_to_aiv(z_tile, split=0)                                  # on the AIC
    z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.tpop_from_aic(split=0)   # on the AIV
    pl.system.tfree_to_aic(z_vec)

A pop's result type is not deducible from its (absent) operands: it is the annotation of the
assignment (parser) or the type the pass gives the call.
"""

from __future__ import annotations

from pypto.errors import TypeCheckError
from pypto.ir.dtypes import INT32
from pypto.ir.ops.common import expect_tile
from pypto.ir.ops.registry import CUBE, READ, SHARED, VECTOR, Kwarg, OpDef, get_op, register_op
from pypto.ir.types import ScalarType, UnknownType

SPLIT_CODES = (0, 1, 2, 3, 4)
DIR_C2V, DIR_V2C = 1, 2


def _split_kw() -> dict:
    return {"split": Kwarg(int, 0), "id": Kwarg(int, None)}


def _check_split(name: str, kw: dict) -> None:
    if kw["split"] not in SPLIT_CODES:
        raise TypeCheckError(f"{name}: split must be a pto-isa split code 0..4, got {kw['split']}",
                             hint="0 none, 1 up-down, 2 left-right, 3 / 4 their odd-extent variants")
    if kw.get("id") is not None and kw["id"] < 0:
        raise TypeCheckError(f"{name}: pipe id must be non-negative, got {kw['id']}")


def _push_type(name: str):
    def deduce(args, kw):
        expect_tile(name, "tile", args[0])
        _check_split(name, kw)
        return UnknownType()
    return deduce


def _pop_type(name: str):
    def deduce(args, kw):
        _check_split(name, kw)
        return UnknownType()          # the assignment's annotation (or the pass) gives the popped tile type
    return deduce


register_op(OpDef("tile.tpush_to_aiv", args=("tile",), kwargs={**_split_kw(), "lane_stride": Kwarg(int, None)},
                  deduce=_push_type("tile.tpush_to_aiv"), affinity=CUBE, effects={0: READ},
                  description="AIC: push a tile into the cube→vector ring"))
register_op(OpDef("tile.tpush_to_aic", args=("tile",), kwargs={**_split_kw(), "lane_stride": Kwarg(int, None)}, deduce=_push_type("tile.tpush_to_aic"),
                  affinity=VECTOR, effects={0: READ}, description="AIV: push a tile into the vector→cube ring"))
register_op(OpDef("tile.tpop_from_aic", kwargs={**_split_kw(), "lane_stride": Kwarg(int, None)},
                  deduce=_pop_type("tile.tpop_from_aic"), affinity=VECTOR,
                  description="AIV: pop the next cube→vector slot (hold it until tfree_to_aic)"))
register_op(OpDef("tile.tpop_from_aiv", kwargs={**_split_kw(), "lane_stride": Kwarg(int, None)}, deduce=_pop_type("tile.tpop_from_aiv"), affinity=CUBE,
                  description="AIC: pop the next vector→cube slot (hold it until tfree_to_aiv)"))
register_op(OpDef("system.tfree_to_aic", args=("tile",), kwargs=_split_kw(), deduce=_push_type("system.tfree_to_aic"),
                  affinity=VECTOR, effects={0: READ}, description="AIV: release a popped cube→vector slot"))
register_op(OpDef("system.tfree_to_aiv", args=("tile",), kwargs=_split_kw(), deduce=_push_type("system.tfree_to_aiv"),
                  affinity=CUBE, effects={0: READ}, description="AIC: release a popped vector→cube slot"))


for _pop in ("tile.tpop_from_aic", "tile.tpop_from_aiv"):
    get_op(_pop).result_from_annotation = True     # the parser types the call by its annotation


def _init_type(name: str):
    def deduce(args, kw):
        if kw["dir_mask"] not in (1, 2, 3):
            raise TypeCheckError(f"{name}: dir_mask must be 1 (C2V), 2 (V2C) or 3 (both), got {kw['dir_mask']}")
        if kw["slot_size"] <= 0:
            raise TypeCheckError(f"{name}: slot_size must be positive, got {kw['slot_size']}")
        for key in ("slot_num", "local_slot_num"):
            if kw[key] is not None and kw[key] <= 0:
                raise TypeCheckError(f"{name}: {key} must be a positive integer, got {kw[key]}")
        if kw["slot_num"] is not None and kw["local_slot_num"] is not None and kw["local_slot_num"] > kw["slot_num"]:
            raise TypeCheckError(f"{name}: local_slot_num ({kw['local_slot_num']}) must not exceed slot_num "
                                 f"({kw['slot_num']})")
        return UnknownType()
    return deduce


_INIT_KW = {"dir_mask": Kwarg(int), "slot_size": Kwarg(int), "slot_num": Kwarg(int, None),
            "local_slot_num": Kwarg(int, None), "id": Kwarg(int, None)}
register_op(OpDef("system.aic_initialize_pipe", args=("c2v_consumer_buf", "v2c_consumer_buf"), min_args=0,
                  kwargs=dict(_INIT_KW), deduce=_init_type("system.aic_initialize_pipe"), affinity=CUBE,
                  description="AIC: set up the cluster's pipe (buffers: the C2V import and the V2C reserve)"))
register_op(OpDef("system.aiv_initialize_pipe", args=("c2v_consumer_buf", "v2c_consumer_buf"), min_args=0,
                  kwargs=dict(_INIT_KW), deduce=_init_type("system.aiv_initialize_pipe"), affinity=VECTOR,
                  description="AIV: set up the cluster's pipe (buffers: the C2V reserve and the V2C import)"))


def _buffer_type(args, kw):
    if kw.get("size") is not None and kw["size"] <= 0:
        raise TypeCheckError(f"system.reserve_buffer: size must be positive, got {kw['size']}")
    return ScalarType(INT32)


register_op(OpDef("system.reserve_buffer", kwargs={"name": Kwarg(str), "size": Kwarg(int), "base": Kwarg(int, -1)},
                  deduce=_buffer_type, affinity=SHARED,
                  description="the consumer's slot memory for a pipe; base -1 (AUTO) is placed by AllocateMemoryAddr"))
register_op(OpDef("system.import_peer_buffer", kwargs={"name": Kwarg(str), "peer_func": Kwarg(str)},
                  deduce=_buffer_type, affinity=SHARED,
                  description="the producer's handle on the buffer its peer function reserved"))
