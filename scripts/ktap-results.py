#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ktap-results.py KUNIT_DIR PREFIX KTAP_FILE: one result line per KUnit case.

KUNIT_DIR is the kernel tree's tools/testing/kunit. The KTAP is parsed by
its kunit_parser.parse_run_tests(), the function behind `kunit.py parse`,
so a log means here exactly what it means to kunit.py; kunit.py's JSON is
not used because it drops a suite's own status (a suite whose result line
never came, its cases all reported). Prints, for results.sh:

  PASS|FAIL|SKIP PREFIX/<suite>/<case>[/<param>][: reason]

one per leaf test (a test case, or a parameter of a parameterised case),
never one per suite. A case the parser had to invent because the plan
announced it but no result came (the kernel crashed or hung in it) has no
name and is "#<number in its suite>", a FAIL. A suite or case that is
itself "not ok" or crashed while none of its cases failed is a FAIL of its
own, so that no failure is lost. kunit.py's human report goes to stderr.
"""

import sys


def main() -> int:
    kunit_dir, prefix, path = sys.argv[1:4]
    out = sys.stdout
    # kunit_printer binds sys.stdout when imported: send its report away
    # from the result lines.
    sys.stdout = sys.stderr
    sys.path.insert(0, kunit_dir)
    import kunit_parser  # pylint: disable=import-outside-toplevel
    Status = kunit_parser.TestStatus

    # The parser keeps no SKIP reason: note it as each result line is read.
    reasons = {}
    parse_result = kunit_parser.parse_test_result

    def parse_result_keeping_reason(lines, test, expected_num):
        line = lines.peek() if lines else ''
        found = parse_result(lines, test, expected_num)
        skip = kunit_parser.TEST_RESULT_SKIP.match(line) if found else None
        if skip:
            reasons[id(test)] = skip.group(5).strip()
        return found

    kunit_parser.parse_test_result = parse_result_keeping_reason

    def emit(state, name, why='', log=()):
        print(f'{state} {name}' + (f': {why}' if why else ''), file=out)
        for line in list(log)[-20:]:
            print(f'    | {line}', file=out)

    def failed_below(test):
        return any(failed_below(t) if t.subtests else not t.ok_status()
                   for t in test.subtests)

    def leaf(test, name):
        if test.status == Status.SUCCESS:
            emit('PASS', name)
        elif test.status == Status.SKIPPED:
            emit('SKIP', name, reasons.get(id(test), ''))
        elif test.status == Status.FAILURE:
            emit('FAIL', name, 'not ok', test.log)
        elif test.status == Status.TEST_CRASHED:
            emit('FAIL', name, 'crashed: no result line (the kernel died or '
                 'hung in it)', test.log)
        else:
            emit('FAIL', name, f'no test case ran ({test.status.name})', test.log)

    def walk(test, name):
        for num, sub in enumerate(test.subtests, 1):
            sub_name = f'{name}/{sub.name or "#%d" % num}'
            if sub.subtests:
                walk(sub, sub_name)
                if not sub.ok_status() and not failed_below(sub):
                    why = ('no result line (the kernel died or hung in it)'
                           if sub.status == Status.TEST_CRASHED else 'not ok')
                    emit('FAIL', sub_name, why, sub.log)
            else:
                leaf(sub, sub_name)

    with open(path, errors='backslashreplace') as f:
        main_test = kunit_parser.parse_run_tests(f.read().splitlines())
    walk(main_test, prefix)
    return 0


if __name__ == '__main__':
    sys.exit(main())
