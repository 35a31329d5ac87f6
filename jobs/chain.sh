#!/bin/bash
# Submit a chain of N legs of one job, each starting when the previous one ends (afterany),
# for sites that do not allow requeueing: every leg continues from the newest checkpoint.
#   jobs/chain.sh N SCRIPT.sbatch [sbatch options before the script are not accepted; put
#   them in SCRIPT's header or in SBATCH_* variables] [-- script arguments]
#   jobs/chain.sh 5 jobs/collapse.sbatch -- --spheres 4000000
set -eu
if [ $# -lt 2 ] || ! [ "$1" -ge 1 ] 2>/dev/null; then
    echo "usage: jobs/chain.sh N SCRIPT.sbatch [-- script arguments]" >&2
    exit 2
fi
n=$1
script=$2
shift 2
previous=""
for leg in $(seq 1 "$n"); do
    dep=()
    [ -n "$previous" ] && dep=(--dependency="afterany:$previous")
    out=$(REQUEUE=0 sbatch --parsable --export=ALL,REQUEUE=0 "${dep[@]}" "$script" "$@")
    previous=${out%%;*}
    echo "leg $leg: job $previous${dep:+ (after ${dep[0]#--dependency=afterany:})}"
done
