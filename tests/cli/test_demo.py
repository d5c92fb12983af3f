"""``zcode-acp demo``: always the simulator, a temporary ZCODE_HOME, the plan and a permission dialog shown."""

from __future__ import annotations

from tests.cli.helpers import ZCODE_ACP, clean_env, run


def demo_env(tmp_path, **extra):
    temp = tmp_path / "tmp"
    temp.mkdir()
    home = tmp_path / "user-home"
    home.mkdir()
    env = clean_env(tmp_path, TMPDIR=str(temp), HOME=str(home), **extra)
    del env["ZCODE_HOME"], env["ZCODE_SIM_DATA"]  # as a user has it: the real ones would be under HOME
    return env, temp, home


def test_the_tour_runs_on_the_simulator_whatever_zcode_bin_says_and_leaves_nothing(tmp_path):
    env, temp, home = demo_env(tmp_path, ZCODE_BIN="/bin/false")
    done = run([ZCODE_ACP, "demo"], env, timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "note: ignoring ZCODE_BIN=/bin/false: the demo always runs on the simulator" in out
    assert "on the simulated backend (" in out and "zcode-sim)" in out
    assert out.count("— stop reason: end_turn") == 3
    # One token figure per turn, the context meter's, on the closing line (issue 21: there were two).
    assert out.count(" tokens") == 3 and out.count("— stop reason: end_turn (context: ") == 3
    # The session's title is the engine's, from its first input (not the simulator's `#sim` line).
    assert out.count("(session title: ") == 1 and "(session title: Show me around this project.)" in out
    # The plan (todo list) and the permission dialogs, answered automatically and shown.
    assert "plan:\n  [x] Read the README\n  [ ] Explore src/\n" in out
    # The engine's reason, then its options (one per kind), the one the demo picked marked.
    assert ("? permission: Bash: rm -rf build/\n  │ This command changes files.\n  → Allow Once (allow_once)\n"
            "    Allow Project (allow_always)\n    Deny (reject_once)\n") in out
    assert "? permission: ExitPlanMode\n  │ 1. Write the tests\n" in out
    assert "  → Approve plan (allow_once)\n    Keep planning (reject_once)\n" in out
    assert out.count("(answered automatically by the demo)") == 2
    # A temporary ZCODE_HOME, removed afterwards: nothing in the user's home or the temp folder.
    assert not (home / ".zcode").exists()
    assert list(temp.iterdir()) == []


def test_a_prompt_picks_a_scenario_with_a_sim_tag(tmp_path):
    env, _, _ = demo_env(tmp_path)
    done = run([ZCODE_ACP, "demo", "#sim stream count=5 text=ab", "--cwd", str(tmp_path)], env, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ZCode:\nababababab" in done.stdout
    assert "note: ignoring" not in done.stdout
    assert done.stdout.count("— stop reason: end_turn") == 1
