"""ccsim.ppv: throughput-value functions and the ideal PPV shares (paper 001 §2).

The expected numbers are worked by hand from the presets' points (README "Packet
values") and paper 001's stated ratios, not taken from the core."""

from __future__ import annotations

import numpy as np
import pytest

import ccsim
from ccsim import ppv


def test_hand_worked_values() -> None:
    # silver: (1 kbps, 1e9) - (10 Mbps, 1e5), a power law of log-log slope
    # (5 - 9) / (7 - 3) = -1, so V(x) = 1e12 / x below 10 Mbps.
    assert ppv.values("silver", 1e6) == pytest.approx(1e6, rel=1e-9)
    # gold: (2 kbps, 1e9) - (100 Gbps, 20): slope (log 20 - 9) / (11 - log 2000) = -1,
    # so V(x) = 2e12 / x.
    assert ppv.values("gold", "1Mbps") == pytest.approx(2e6, rel=1e-9)
    # silver above the 10 Mbps step: (10 Mbps, 5e4) - (100 Gbps, 5), slope -1: 5e11 / x.
    assert ppv.values("silver", "20Mbps") == pytest.approx(2.5e4, rel=1e-9)


def test_arrays_keep_their_shape_and_units_are_read() -> None:
    rates = np.array([[1e6, 2e6], [1e7, 1e8]])
    got = ppv.values("gold", rates)
    assert isinstance(got, np.ndarray)
    assert got.shape == (2, 2)
    np.testing.assert_allclose(got, 2e12 / rates, rtol=1e-9)
    mixed = ppv.values("silver", ["1Mbps", 2e6, "1.5kbps"])
    np.testing.assert_allclose(mixed, [1e6, 5e5, 1e12 / 1.5e3], rtol=1e-9)


def test_points_with_units() -> None:
    points = [("1Mbps", 1e6), ("10Mbps", 1e4)]  # slope -2 on log-log axes
    np.testing.assert_allclose(
        ppv.values(points, ["1Mbps", "3Mbps", "10Mbps", "1Gbps"]),
        [1e6, 1e6 / 9, 1e4, 1e4],  # constant beyond the last point
        rtol=1e-9,
    )
    assert ppv.values([[1e6, 1e6], [1e7, 1e4]], 3e6) == pytest.approx(1e6 / 9, rel=1e-9)


def test_region_one_gold_gets_twice_silver() -> None:
    # Paper 001 §4: 5 Gold + 5 Silver on 100 Mbps, Silver below 10 Mbps: 2:1.
    shares = ppv.ideal_shares({"gold": 5, "silver": 5}, "100Mbps")
    assert shares.per_flow_bps["gold"] == pytest.approx(2e8 / 15, rel=1e-6)
    assert shares.per_flow_bps["silver"] == pytest.approx(1e8 / 15, rel=1e-6)
    assert shares.total_bps == pytest.approx(1e8, rel=1e-6)
    # Both functions take the threshold value there: gold 2e12 / x, silver 1e12 / x.
    assert shares.threshold == pytest.approx(1e12 / (1e8 / 15), rel=1e-6)
    assert shares.class_bps("gold") == pytest.approx(5 * 2e8 / 15, rel=1e-6)


def test_region_three_gold_gets_four_times_silver() -> None:
    # 1 Gold + 1 Silver on 100 Mbps: Silver above its 10 Mbps step, 4:1.
    shares = ppv.ideal_shares({"gold": 1, "silver": 1}, 100e6)
    assert shares.per_flow_bps["gold"] == pytest.approx(80e6, rel=1e-6)
    assert shares.per_flow_bps["silver"] == pytest.approx(20e6, rel=1e-6)


def test_custom_functions_beside_presets() -> None:
    shares = ppv.ideal_shares(
        {"mine": ([("1Mbps", 1e6), ("10Mbps", 1e4)], 3), "voice": 2}, "10Mbps"
    )
    # Voice has strict priority up to 64 kbps; the rest goes to the 3 flows.
    assert shares.per_flow_bps["voice"] == pytest.approx(64e3, rel=1e-6)
    assert shares.per_flow_bps["mine"] == pytest.approx((10e6 - 128e3) / 3, rel=1e-6)
    assert shares.flows == {"mine": 3, "voice": 2}


def test_exported_from_the_package() -> None:
    assert ccsim.ppv is ppv
    assert ppv.PRESETS == ("gold", "silver", "background", "voice")


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda: ppv.values("platinum", [1e6]), ["platinum", "gold", "silver"]),
        (lambda: ppv.ideal_shares({"platinum": 2}, "10Mbps"), ["platinum"]),
        (lambda: ppv.values("gold", "10"), ["rate", "'10'"]),
        (lambda: ppv.values([[1e6]], 1e6), ["points"]),
        (lambda: ppv.values([("2Mbps", 1), ("1Mbps", 2)], 1e6), ["points[1]"]),
        (lambda: ppv.ideal_shares({"gold": 0}, "10Mbps"), ["gold", ">= 1"]),
        (lambda: ppv.ideal_shares({"gold": 1}, "0Mbps"), ["capacity"]),
        (lambda: ppv.ideal_shares({}, "10Mbps"), ["classes"]),
    ],
)
def test_bad_input_is_one_line(call, words: list[str]) -> None:
    with pytest.raises(ValueError) as err:
        call()
    message = str(err.value)
    assert "\n" not in message
    for word in words:
        assert word in message
