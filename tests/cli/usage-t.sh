#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# usage-t.sh - one convention for a wrong command line in every command:
# exit status 129, what getopt found wrong in git's words ("unknown option
# '--x'", "unknown switch 'x'", "option '--x' requires a value", ...),
# then the command's synopsis, and nothing on stdout; and report's and
# compare's --help describe their shared analysis options in one text.
# Nothing is recorded and no data file is read: each error comes first.
#
# Environment (make check): top_srcdir, VARPERF.

. "$top_srcdir/tests/lib/test-subr.sh"

require_file "$VARPERF"
cd "$TMPDIR_T" || tap_bail "cannot enter $TMPDIR_T"

synopsis_report='usage: varperf report [<options>] [<file>...]'
synopsis_compare='usage: varperf compare [<options>] <profile.data> <regression.data>'
synopsis_record='usage: varperf record [<options>] [--] <program> [<args>...]'
synopsis_gdb='usage: varperf gdb [<options>] [--] [<program> [<args>...]]'
synopsis_version='usage: varperf version [--build-options]'
synopsis_explain='usage: varperf explain [<options>] <task>'
synopsis_bound='usage: varperf bound [<options>] <task>'
synopsis_predict='usage: varperf predict [<options>] [--size <n>] <file>...'

# check CMD MESSAGE ARGS... - varperf CMD ARGS exits 129 and prints
# exactly "varperf: error: MESSAGE" and CMD's synopsis on stderr,
# nothing on stdout
check() {
	_cmd=$1 _msg=$2
	shift 2
	"$VARPERF" "$_cmd" "$@" >out 2>err
	_st=$?
	eval "_syn=\$synopsis_$_cmd"
	tap_is "129 varperf: error: $_msg
$_syn" "$_st $(cat err)" "varperf $_cmd $*"
	tap_is "" "$(cat out)" "varperf $_cmd $*: nothing on stdout"
}

for cmd in report compare record gdb version explain bound predict; do
	check "$cmd" "unknown option '--bogus'" --bogus
	check "$cmd" "unknown option '--bogus'" --bogus=1
	check "$cmd" "unknown switch 'Z'" -Z
	check "$cmd" "option '--help' takes no value" --help=1
done
# a short option inside a cluster, after a long one
check report "unknown switch 'Z'" --wide -Zh
check record "unknown switch 'Z'" -qZ
# values missing at the end of the line, long and short
check report "option '--input' requires a value" --input
check report "switch 'i' requires a value" -i
check compare "option '--format' requires a value" --format
check record "option '--freq' requires a value" --freq
check record "switch 'o' requires a value" -o
check gdb "option '--gdb' requires a value" --gdb
check gdb "switch 'i' requires a value" -i
# an abbreviation that names more than one option, or only one
check report "ambiguous option '--co' (could be --cov-threshold, --contexts or --confidence)" --co
check compare "ambiguous option '--s' (could be --symmetric, --similarity or --strict)" --s
check report "option '--wide' takes no value" --wid=1
# arguments the command takes none of, or too few
check version "unexpected argument 'extra'" extra
check compare "two data files are needed: the profile and the regression" a.data
check compare "unexpected argument 'c.data' (several recordings a side go as <profile.data>... -- <regression.data>...)" a.data b.data c.data
check compare "no profile recording before '--'" -- -- b.data
check predict "no data files given" --size 10
check predict "invalid value 'x' for '--size': must be a whole number, K/M/G allowed" --size x a.data
check predict "invalid value '0-3' for '--phases': must be <min>-<max> or <n>, from 1 to 100" --phases 0-3 a.data
check predict "invalid value '5,,6' for '--intervals': must be up to 32 comma-separated lengths of 1 to 1000000 samples" --intervals 5,,6 a.data
check predict "invalid value '0' for '--coverage': must be greater than 0 and at most 100%" --coverage 0 a.data
check predict "invalid value 'xml' for '--format': must be 'text' or 'json'" --format xml a.data
check record "no program to record" -q
# --slowest takes its context after '=' only
check report "unexpected argument 'main' (a context goes as --slowest=main)" --slowest main
check report "option '--slowest-count' requires a value" --slowest-count
check explain "no task given: name a probed function" -i x.data
check bound "unexpected argument 'extra'" physics extra
check bound "option '--max' requires a value" physics --max
check explain "unknown option '--train'" physics --train 0.5

# check_value CMD MESSAGE ARGS... - a wrong value: exit 129 and exactly
# "varperf: error: MESSAGE" on stderr (no synopsis), nothing on stdout
check_value() {
	_cmd=$1 _msg=$2
	shift 2
	"$VARPERF" "$_cmd" "$@" >out 2>err
	tap_is "129 varperf: error: $_msg" "$? $(cat err)" "varperf $_cmd $*"
	tap_is "" "$(cat out)" "varperf $_cmd $*: nothing on stdout"
}

check_value report "invalid value '0' for '--slowest-count': must be a whole number from 1 to 4096" \
	--slowest-count=0
check_value report "invalid value '4097' for '--slowest-count': must be a whole number from 1 to 4096" \
	--slowest-count 4097
check_value report "invalid value '-1' for '--slowest-count': must be a whole number from 1 to 4096" \
	--slowest-count=-1
check_value report "invalid context 'main//f': an empty function name" --slowest=main//f
check_value report "invalid context '': an empty function name" --slowest=
check_value report "invalid context 'f;': an empty function name" --slowest='f;'
check_value report "'--slowest' is for the text report, chrome and folded: the JSON report has \
every node's slowest calls in its \"slowest\" member" --slowest --format json
check_value report "'--slowest' is for the text report, chrome and folded: --format dot draws \
the graph" \
	--slowest=f --format dot
check_value report "options '--slowest' and '--vcg' cannot be used together" --vcg --slowest

check_value report "invalid value 'svg' for '--format': must be 'text', 'json', 'dot', 'chrome', 'folded', 'html' or 'pprof'" \
	--format svg
check_value report "invalid value 'calls' for '--folded-value': must be 'time' or 'variance'" \
	--format folded --folded-value calls
check_value report "'--folded-value' is for '--format folded'" --folded-value=time
check_value report "'--folded-value=variance' cannot be used with '--slowest': the slowest calls make a time profile" \
	--format folded --slowest --folded-value=variance
check_value report "'--typical' is for '--format folded --slowest': the calls at large next to the slowest" \
	--format folded --typical
check_value report "invalid context '': an empty function name" --format chrome --slowest=
check_value bound "invalid value '0' for '--train': must be greater than 0 and at most 1" t --train 0
check_value bound "invalid value '1' for '--alpha': must be greater than 0 and less than 1" t --alpha 1
check_value explain "invalid value '150%' for '--alpha-sw': must be greater than 0 and less than 1" \
	t --alpha-sw 150%
check_value bound "invalid value 'x' for '--max': must be <callsite>=<n>" t --max x
check_value bound "invalid value '-1' for '--cook': must be a number of at least 0" t --cook -1
check_value bound "invalid value 'x' for '--seed': must be a whole number" t --seed x
# one wording for every bad value, git's: invalid value 'V' for '--OPTION'
check_value record "invalid value 'x' for '--mode': must be 'auto', 'probe', 'sample' or 'combined'" \
	--mode x -- true
check_value record "invalid value 'x' for '--backend': must be 'auto', 'bpf', 'perf' or 'user'" \
	--backend x -- true
check_value record "invalid value 'x' for '--event': must be 'auto', 'cpu-clock', 'task-clock' or 'cycles'" \
	-e x -- true
check_value record "invalid value '0' for '--freq': must be a whole number of samples per second from 1 to 100000" \
	-F 0 -- true
check_value record "invalid value '60' for '--stack-size': must be a multiple of 8 from 64 to 65528 (bytes)" \
	--stack-size 60 -- true
check_value record "invalid value '0' for '--pid': must be a process id" -p 0
check_value record "invalid value 'soon' for '--duration': must be a number of seconds greater than 0" \
	--duration soon -- true
check_value record "invalid value '1K' for '--buffer-size': must be a size from 4K to 1G" -m 1K -- true
check_value record "invalid value 'x' for '--input-size': must be a whole number" \
	--input-size x -- true
check_value report "invalid value '0' for '--pid': must be a process id" --pid 0
check predict "invalid value 'x' for '--seed': must be a whole number" --seed x a.data

# varperf itself, before any command
"$VARPERF" --bogus >out 2>err
tap_is "129 varperf: error: unknown option '--bogus'" "$? $(head -n 1 err)" \
	"varperf --bogus: the same words and status"
"$VARPERF" bogus >out 2>err
tap_is "129 varperf: error: 'bogus' is not a varperf command" "$? $(head -n 1 err)" \
	"varperf bogus: not a command, the usage status"

# the shared analysis options: one text in both commands' --help
# shared CMD - the lines of CMD's --help from --cutoff to the first option
# after --time
shared() {
	"$VARPERF" "$1" --help | $AWK '
		/^    --cutoff / { on = 1 }
		on && /^    --/ && !/^    --(cutoff|probability|window|cov-threshold|similarity|beta|time) / { exit }
		on { print }'
}
shared report >report.help
shared compare >compare.help
tap_like "$(cat report.help)" '^    --time <wall' "report --help lists the shared options"
tap_diff "report and compare describe the shared options alike" report.help compare.help

tap_done
