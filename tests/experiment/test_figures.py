"""optzoo.report.figures: every mean carries its 95 % CI, categories are never joined by lines,
wide spans get log axes, non-finite values are left out, and nothing is cut at the image edge."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from optzoo.experiment.stats import mean_ci  # noqa: E402
from optzoo.report import figures  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _band(ax, k=0):
    """(x, lower, upper) of the k-th fill_between band of ``ax``."""
    poly = [c for c in ax.collections if c.__class__.__name__ in ("PolyCollection",
                                                                   "FillBetweenPolyCollection")]
    verts = poly[k].get_paths()[0].vertices
    return verts


def test_line_panel_band_is_the_t_interval_of_the_seeds():
    seeds = {1.0: [1.0, 2.0, 4.0], 2.0: [3.0, 3.5, 2.5], 4.0: [5.0, 6.0, 7.0]}
    fig, (ax,) = figures.grid(1)
    figures.line_panel(ax, {"m": seeds}, xlog=False, ylog=False)
    line = ax.get_lines()[0]
    assert list(line.get_xdata()) == [1.0, 2.0, 4.0]
    np.testing.assert_allclose(line.get_ydata(), [np.mean(v) for v in seeds.values()])
    verts = _band(ax)
    for x, vals in seeds.items():
        m, h = mean_ci(vals)
        ys = verts[np.isclose(verts[:, 0], x), 1]
        np.testing.assert_allclose([ys.min(), ys.max()], [m - h, m + h], rtol=1e-9)
    assert line.get_marker() == "o"


def test_line_panel_leaves_non_finite_out_and_says_how_many():
    fig, (ax,) = figures.grid(1)
    figures.line_panel(ax, {"sgd": {1.0: [1.0, math.inf, 2.0], 2.0: [math.nan, math.nan],
                                    3.0: [2.0, 2.0]},
                            "adam": {1.0: [1.0, 1.5], 2.0: [0.5, 0.7]}})
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    assert set(lines) == {"sgd (3 non-finite left out)", "adam"}
    assert list(lines["sgd (3 non-finite left out)"].get_xdata()) == [1.0, 3.0]
    assert lines["sgd (3 non-finite left out)"].get_ydata()[0] == pytest.approx(1.5)


@pytest.mark.parametrize(("ys", "log"), [([1.0, 2.0, 50.0], "linear"),
                                         ([1e-3, 1.0, 450.0], "log"),
                                         ([-1.0, 1.0, 1e4], "linear")])
def test_auto_log_axis_only_for_wide_positive_spans(ys, log):
    fig, (ax,) = figures.grid(1)
    figures.line_panel(ax, {"m": {i: [y, y] for i, y in enumerate(ys)}}, xlog=False)
    assert ax.get_yscale() == log


def test_category_bars_carry_ci_full_labels_and_a_log_axis_for_a_diverged_arm():
    vals = {"gradient descent": [0.9, 0.88, 0.91], "ham (alpha=1000)": [0.26, 0.23, 0.3],
            "diverged arm": [450.0, 430.0, 470.0], "x": [0.01, 0.011, 0.012]}
    fig, (ax,) = figures.grid(1)
    figures.category_panel(ax, vals, ylabel="relative error")
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == list(vals)
    assert all(t.get_rotation() == 30 for t in ax.get_xticklabels())
    assert ax.get_yscale() == "log"
    bars = ax.patches
    assert [b.get_height() for b in bars] == pytest.approx([np.mean(v) for v in vals.values()])
    # one error bar per category, each the t half-width
    segs = [c for c in ax.collections if c.__class__.__name__ == "LineCollection"][0]
    halves = [abs(s[1][1] - s[0][1]) / 2 for s in segs.get_segments()]
    assert halves == pytest.approx([mean_ci(v)[1] for v in vals.values()])
    # categories are never joined by a line
    assert not [ln for ln in ax.get_lines() if len(ln.get_xdata()) > 1
                and ln.get_linestyle() not in ("None", "")]


def test_category_points_grouped_series_and_na_cells():
    fig, (ax,) = figures.grid(1)
    figures.category_panel(ax, {"sac": {"pendulum": [1.0, 2.0], "mountaincar": [3.0, 4.0]},
                                "dr-sac": {"pendulum": [2.0, 2.5], "mountaincar": [math.nan]}},
                           kind="point", hline=0.0)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["pendulum", "mountaincar"]
    assert ax.get_xticklabels()[0].get_rotation() == 30  # "mountaincar" is long
    handles, labels = ax.get_legend_handles_labels()
    assert labels == ["sac", "dr-sac (1 non-finite left out)"]
    assert any(t.get_text() == "n/a" for t in ax.texts)
    offsets = [c.get_offsets() for c in ax.collections if c.__class__.__name__ ==
               "PathCollection"]
    assert [len(o) for o in offsets] == [2, 1]
    assert offsets[0][0][0] < 0 < offsets[1][0][0]  # dodged side by side around category 0


def test_single_seed_has_no_interval_but_is_drawn():
    fig, (ax,) = figures.grid(1)
    figures.category_panel(ax, {"a": [1.0], "b": [2.0]})
    assert [b.get_height() for b in ax.patches] == [1.0, 2.0]


def test_curves_panel_band_matches_mean_ci_pointwise():
    rng = np.random.default_rng(0)
    runs = rng.normal(size=(4, 30)).cumsum(axis=1) + 100
    fig, (ax,) = figures.grid(1)
    figures.curves_panel(ax, {"loss": list(runs)}, ylog=False)
    line = ax.get_lines()[0]
    assert line.get_label() == "loss (n = 4)"
    np.testing.assert_allclose(line.get_ydata(), runs.mean(axis=0))
    verts = _band(ax)
    ys = verts[np.isclose(verts[:, 0], 7.0), 1]
    m, h = mean_ci(runs[:, 7])
    np.testing.assert_allclose([ys.min(), ys.max()], [m - h, m + h], rtol=1e-9)


def test_saved_png_has_nothing_cut_at_its_edges(tmp_path):
    long = ["connectivity", "sailing", "sysadmin", "a much longer domain name"]
    fig, axes = figures.grid(3)
    figures.category_panel(axes[0], {n: [i + 1.0, i + 1.2, i + 0.9] for i, n in
                                     enumerate(long)}, ylabel="a y label that is long")
    figures.line_panel(axes[1], {"m": {1: [1, 2], 10: [3, 4]}}, xlabel="x")
    figures.heatmap_panel(axes[2], [[1.0, 2.0], [3.0, math.nan]], xticks=["lr 1e-3", "1e-2"],
                          yticks=[64, 128])
    out = figures.save(fig, tmp_path / "f.png", "caption")
    assert out.path == tmp_path / "f.png" and out.caption == "caption"
    img = mpimg.imread(out.path)[..., :3]
    for edge in (img[0], img[-1], img[:, 0], img[:, -1]):
        assert np.all(edge > 0.95), "something touches the image's edge (cut off)"
    assert not plt.get_fignums()  # save closes the figure


def test_heatmap_uses_a_log_scale_for_wide_spans():
    fig, (ax,) = figures.grid(1)
    figures.heatmap_panel(ax, [[1e-3, 1.0], [10.0, 500.0]], xticks=[1, 2], yticks=[1, 2])
    assert ax.images[0].norm.__class__.__name__ == "LogNorm"
    assert [t.get_text() for t in ax.texts] == ["0.001", "1", "10", "500"]


def test_grid_hides_unused_cells():
    fig, axes = figures.grid(5, ncols=3)
    assert len(axes) == 5
    assert sum(ax.get_visible() for ax in fig.axes) == 5


@pytest.mark.parametrize(("call", "match"), [
    (lambda: figures.grid(0), "n: expected a positive"),
    (lambda: figures.category_panel(figures.grid(1)[1][0], {"a": [1]}, kind="line"), "kind"),
    (lambda: figures.line_panel(figures.grid(1)[1][0], {"a": {1: [1]}}, ylog="yes"),
     "ylog: expected .* .symlog."),
    (lambda: figures.save(figures.grid(1)[0], "f.pdf", "c"), "path: expected a .png"),
])
def test_bad_arguments_name_themselves(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_a_category_with_diverged_seeds_says_so_in_its_label():
    fig, (ax,) = figures.grid(1)
    figures.category_panel(ax, {"gd": [0.9, 0.8], "ham": [0.3, math.inf, 0.2]})
    assert [t.get_text() for t in ax.get_xticklabels()] == ["gd",
                                                            "ham\n(1 non-finite left out)"]
    assert ax.patches[1].get_height() == pytest.approx(0.25)


def test_scatter_panel_has_cis_on_both_axes():
    fig, (ax,) = figures.grid(1)
    fx, fy = [0.1, 0.2, 0.15], [0.9, 0.85, 0.95]
    figures.scatter_panel(ax, {"ofmu": (fx, fy), "graddiff": ([0.3, math.nan], [0.5, 0.6])},
                          xlog=False, ylog=False)
    bars = [c for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"]
    assert len(bars) == 2
    (mx, my), = bars[0].lines[0].get_xydata()
    assert (mx, my) == pytest.approx((np.mean(fx), np.mean(fy)))
    segs = [s for lc in bars[0].lines[2] for s in lc.get_segments()]
    widths = sorted(abs(s[1][0] - s[0][0]) + abs(s[1][1] - s[0][1]) for s in segs)
    assert widths == pytest.approx(sorted([2 * mean_ci(fx)[1], 2 * mean_ci(fy)[1]]))
    assert ax.get_legend_handles_labels()[1] == ["ofmu", "graddiff (1 non-finite left out)"]


def test_a_single_x_series_gets_an_error_bar_and_references_are_drawn():
    fig, (ax,) = figures.grid(1)
    figures.line_panel(ax, {"one": {3.0: [1.0, 2.0, 3.0]}}, hline=0.5,
                       reference={"bound": ([1, 5], [4, 4])}, ylog=False, xlog=False)
    bars = [c for c in ax.containers if c.__class__.__name__ == "ErrorbarContainer"]
    assert len(bars) == 1
    seg = bars[0].lines[2][0].get_segments()[0]
    assert abs(seg[1][1] - seg[0][1]) == pytest.approx(2 * mean_ci([1.0, 2.0, 3.0])[1])
    labels = ax.get_legend_handles_labels()[1]
    assert sorted(labels) == ["bound", "one"]
    fig, (ax,) = figures.grid(1)
    figures.curves_panel(ax, {"c": [[1, 2, 3], [2, 3, 4]]}, hline=1.0, vline=1.0)
    assert len(ax.get_lines()) == 3  # the mean, the level, the vertical mark


def test_by_seed_dicts_are_one_series_and_grid_shares_axes():
    fig, (ax,) = figures.grid(1)
    figures.category_panel(ax, {"dpo": {0: 0.5, 1: 0.6, 2: 0.7}, "ti-dpo": {0: 0.8, 1: 0.9}})
    assert [t.get_text() for t in ax.get_xticklabels()] == ["dpo", "ti-dpo"]
    assert [b.get_height() for b in ax.patches] == pytest.approx([0.6, 0.85])
    fig, axes = figures.grid(2, sharey=True)
    figures.line_panel(axes[0], {"a": {1: [1, 2], 2: [3, 4]}}, legend="outside")
    figures.line_panel(axes[1], {"a": {1: [10, 20], 2: [30, 40]}})
    assert axes[0].get_ylim() == axes[1].get_ylim()
    assert axes[0].get_legend() is not None


def test_symlog_and_a_figure_title(tmp_path):
    fig, (ax,) = figures.grid(1)
    figures.line_panel(ax, {"gap": {1: [-100.0, -90.0], 2: [0.0, 0.1], 3: [500.0, 400.0]}},
                       ylog="symlog", xlog=False)
    assert ax.get_yscale() == "symlog"
    assert fig._suptitle is None
    figures.save(fig, tmp_path / "t.png", "c", title="Pendulum and MountainCar")
    assert fig._suptitle.get_text() == "Pendulum and MountainCar"
