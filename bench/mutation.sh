#!/usr/bin/env bash
# Mutation testing of Kafka's decisions: mutmut changes analysis/ one operator, constant or
# guard at a time ([tool.mutmut] in pyproject.toml) and runs the tests that reach the changed
# function; a mutant that every test survives is a rule no test guards (a missing counter-case)
# or an equivalent mutant, listed with its reason in bench/README.md ("Mutation testing").
# Not part of CI: a whole run takes two to three hours on two free cores.
#
#   bench/mutation.sh                                   # every module of analysis/
#   bench/mutation.sh 'kreplica.analysis.election.*'    # one package (mutmut's name globs)
#   bench/mutation.sh --show                            # the survivors of the last run, with diffs
#   bench/mutation.sh --fast                            # first stage: no wild-corpus tests
#   bench/mutation.sh --recheck                         # second stage: the survivors, every test
#
# The two stages give the verdicts of one run with every test: a mutant killed without the
# differential tests over ../shared/oracle/wild is killed, and what survives the first stage is
# run again by name with all of them (tests/conftest.py deselects them when
# KREPLICA_MUTATION_STAGE=fast). The first stage is the faster where a survivor of the cluster
# image or the timeline would otherwise run the wild corpus' folds.
#
# KREPLICA_MUTATION_JOBS sets the parallel workers (default: the cores). The survivors' names go to
# bench/results/mutation-survivors.txt and the counts to bench/results/mutation-summary.txt. The
# table per module (bench/README.md): mutmut results --all true | python bench/mutation_table.py
#   --equivalent bench/mutation-equivalent.txt --killed-since bench/mutation-killed-since/*.txt
# A run that does not fit a session resumes: mutmut (3.8+) keeps each mutant's result in mutants/,
# and a later bench/mutation.sh with no names checks only the mutants without one (those of
# functions changed since are re-checked; tests added since are found and timed first). Keep the
# worktree and its mutants/ between sessions (a name or glob given to mutmut runs its mutants
# again even when checked). Save a stopped run's listing (mutmut results --all true >
# bench/results/mutation-<date>-1.txt): python bench/mutation_table.py <part 1> <part 2> ... takes
# each module from the part that checked it completely (a module is never counted from two runs,
# whose numbering may differ).
# mutmut runs the cheapest mutants first, so a stopped run has checked every module in part; the
# mutants whose tests start Kafka's JVM tools (tests/interop) are the last and slowest. Within a
# mutant, tests/conftest.py orders its tests fastest first (by mutmut's own timings), so a killed
# mutant costs its cheapest killing test. bench/mutation_kills.py runs a test written after the
# run against each survivor (the `--killed-since` lines) and checks the names those files list.
set -euo pipefail
cd "$(dirname "$0")/.."
# the tests run from mutmut's copy of the tree (mutants/), where ../shared is not beside them
export KREPLICA_ORACLE="${KREPLICA_ORACLE:-$(cd .. && pwd)/shared/oracle}"
if [[ "${1:-}" == "--show" ]]; then
    mutmut results | awk '/: survived/ {print $1}' | while read -r name; do mutmut show "$name"; done
    exit 0
fi
stage=()
case "${1:-}" in
    --fast) export KREPLICA_MUTATION_STAGE=fast; shift ;;
    --recheck)
        shift
        mapfile -t stage < <(mutmut results | awk '/: survived/ {print $1}')
        [[ ${#stage[@]} -gt 0 ]] || { echo "no survivors to check again"; exit 0; } ;;
esac
# mutmut redraws one progress line with \r: keep its last state, and every other line it prints
set +e
mutmut run --max-children "${KREPLICA_MUTATION_JOBS:-$(nproc)}" "${stage[@]}" "$@" 2>&1 | tr '\r' '\n' \
    | awk '/🎉/ {last = $0; next} NF {print} END {if (last) print last}'
status=${PIPESTATUS[0]}
set -e
[[ $status == 0 ]] || exit "$status"
mutmut results --all true > bench/results/mutation-all.txt
awk '/: survived/ {print $1}' bench/results/mutation-all.txt > bench/results/mutation-survivors.txt
awk -F': ' 'NF == 2 {n[$2]++} END {for (s in n) printf "%-12s %6d\n", s, n[s]}' bench/results/mutation-all.txt \
    | sort > bench/results/mutation-summary.txt
cat bench/results/mutation-summary.txt
