"""Devices: listed like `clscale devices`, selected like --devices, and the
tests run on the implementation conftest chose."""
import numpy as np

import clscale
from conftest import FP64, IMPL, make_data, assert_close


def test_devices_lists_the_chosen_implementation():
    devs = clscale.devices()
    assert devs, "no device"
    want = {"pocl": "Portable Computing Language", "rusticl": "rusticl"}[IMPL]
    for d in devs:
        assert d["platform"] == want, d
        assert set(d) >= {"index", "name", "vendor", "platform", "version", "driver", "type",
                          "compute_units", "global_mem_bytes", "fp64", "host_unified"}
        assert d["fp64"] == FP64
    if IMPL == "pocl":
        assert len(devs) == 2  # POCL_DEVICES="pthread pthread"


def test_a_selector_picks_devices_for_an_estimator():
    assert len(clscale.devices("0")) == 1
    assert clscale.devices("0")[0]["index"] == 0
    x = make_data((100, 4), np.float32, seed=71)
    a = clscale.MinMaxScaler(devices="0").fit_transform(x)
    b = clscale.MinMaxScaler(devices="all").fit_transform(x)
    assert_close(a, b, 0.0, "one device vs all")
