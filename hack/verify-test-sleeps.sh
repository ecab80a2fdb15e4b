#!/usr/bin/env bash
# Tests wait for the condition a pause would stand for (test/framework's Poll and WaitFor),
# never a fixed time. A fixed period stays only where a test must see that nothing happens
# (or that something happens at a bounded rate) for a while, and then its length comes from
# the component's own setting; hack/test-sleeps.allow lists those files, how many
# time.Sleep calls each may have, and why. This fails on any other time.Sleep in test code
# (every _test.go, and test/ outside the benchmark, which measures with its own pacing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ALLOW=hack/test-sleeps.allow

declare -A allowed
while read -r file count _; do
  [[ -z "${file}" || "${file}" == \#* ]] && continue
  allowed["${file}"]="${count}"
done <"${ALLOW}"

ret=0
while read -r file; do
  count="$(grep -c 'time\.Sleep(' "${file}" || true)"
  ((count > 0)) || continue
  if ((count > ${allowed[${file}]:-0})); then
    echo "${file}: ${count} time.Sleep call(s), ${ALLOW} allows ${allowed[${file}]:-0}; poll for the condition instead (test/framework Poll, WaitFor), or add the file with the setting the period comes from:" >&2
    grep -n 'time\.Sleep(' "${file}" | sed 's/^/  /' >&2
    ret=1
  fi
done < <(git ls-files '*_test.go' 'test/*.go' ':!test/bench/*')
((ret == 0)) && echo "no fixed sleeps in tests outside ${ALLOW} ($(grep -c '^[^#]' "${ALLOW}") files allowed)."
exit "${ret}"
