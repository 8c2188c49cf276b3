"""The reference's op catalog (names only, tests/ir/data/reference_op_catalog.txt) is covered: every
spelling resolves in our `pl` / `pld` namespaces, so none is missing (docs/internals.md, "Adding an op")."""

from tests.ir.catalog import catalog_names, unknown_catalog_names


def test_no_catalog_name_is_missing():
    missing = unknown_catalog_names()
    assert not missing, (f"reference catalog names unknown to pl / pld: {missing}; register the op in "
                         "pypto/ir/ops/ (a row of elementwise.py if it is regular) or its spelling in "
                         "pypto/language/ops/dispatch.py")


def test_the_catalog_list_is_the_reference_catalog():
    names = catalog_names()
    assert len(names) == len(set(names)) and len(names) >= 164
    assert {"pl.sort32", "pl.mrgsort", "pl.row_argmax", "pl.arange", "pld.tensor.remote_store"} <= set(names)
