"""The generation study's result: its table (markdown), MusicGen-small ratios and plot; written per device."""

from __future__ import annotations

import platform

from audionet.benchmarks.common.results import pyplot, save_figure, table, write_result

RANDOM = "random weights — timing only"  # the one note of random-weight rows (gpu_check's tables read it too)
MUSICGEN = "MusicGen-small"  # diffusion music's time is given as a ratio to this row's, for the same length


def write(out: str, slug: str, rows: list[dict], runs: int, command: str) -> str:
    data = {"device": slug, "cpu": platform.processor() or platform.machine(), "runs": runs, "rows": rows}
    return write_result(out, slug, "generation", data, markdown(data), command, lambda path: plot(rows, slug, path))


def markdown(data: dict) -> str:
    rows = [r for r in data["rows"] if "error" not in r]
    peak = any(r.get("peak_gb") for r in rows)  # measured on CUDA only: no column for a CPU run
    built = any("build_s" in r for r in rows)  # results before the build was timed apart: inside load s
    headers = ["backend", "service", "weights", "audio s", "gen s (mean, min-max)", "RTF"]
    headers += ["build s"] * built + ["load s", "load avg"] + ["peak GB"] * peak
    cells = [
        [
            r["backend"],
            r["service"],
            r["weights"],
            r["audio_s"],
            f"{r['gen_s_mean']} ({r['gen_s_min']}-{r['gen_s_max']})",
        ]
        + [r["rtf"]]
        + [r.get("build_s", "-")] * built
        + [r["load_s"], r.get("load_avg_1min", "-")]
        + ([r.get("peak_gb") or "-"] if peak else [])
        for r in rows
    ]
    failed = [f"- {r['backend']}: failed: {r['error']}\n" for r in data["rows"] if "error" in r]
    return (
        f"Generation real-time factor on {data['device']} (warm-up excluded, {data['runs']} run(s) each; lower is "
        "faster).\n\n"
        + table(headers, cells)
        + "".join(f"\n{line}\n" for line in musicgen_ratios(rows))
        + ("\n" + "".join(failed) if failed else "")
    )


def musicgen_ratios(rows: list[dict]) -> list[str]:
    """Each other music row's generation time over MusicGen-small's for the same audio length (same run)."""
    base = [r for r in rows if r["backend"].startswith(MUSICGEN)]
    if not base:
        return []
    lines = []
    for row in rows:
        if row["service"] == base[0]["service"] and row["weights"] == RANDOM and row is not base[0]:
            if row["audio_s"] == base[0]["audio_s"] and base[0]["gen_s_mean"]:
                ratio = row["gen_s_mean"] / base[0]["gen_s_mean"]
                lines.append(f"{row['backend']}: {ratio:.3f} x MusicGen-small's time for the same {row['audio_s']} s.")
    return lines


def plot(rows: list[dict], slug: str, path: str) -> str:
    rows = [r for r in rows if "error" not in r]
    fig, ax = pyplot().subplots(figsize=(8, 0.45 * len(rows) + 1.5))
    colours = ["C1" if r["weights"] == RANDOM else "C0" for r in rows]
    ax.barh([r["backend"] for r in rows], [r["rtf"] or 0 for r in rows], color=colours)
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.invert_yaxis()
    ax.set(xscale="log", xlabel="real-time factor (log; left of the line is faster than playback)")
    ax.set_title(f"Generation speed on {slug} (orange: random weights, timing only)", fontsize=9)
    return save_figure(fig, path)
