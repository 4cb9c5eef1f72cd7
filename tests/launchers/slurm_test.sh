#!/bin/bash
# rcc under real Slurm daemons (slurmctld, slurmd, munged started here, stopped at the end also on
# failure): srun -n 1..4 with --mpi=pmix (rank, size and rendezvous from PMIx), --mpi=pmi2 and
# --mpi=none (Slurm's variables; the step's first task hosts the store on a derived port, no
# shared directory) runs the launch probe (the p2p suite at 2 and 4 ranks, the collectives suite
# at 3); a rank that never starts and a batch job that runs one task of four fail in bounded time
# naming the missing ranks; then a two-node cluster (a slurmd per network-namespace host) runs
# srun -N 2 -n 4.
#   slurm_test.sh BUILD_DIR SCRIPTS_DIR
set -u
build=$1
SLURM_SCRIPTS=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/slurm.sh"
set_programs "$build"

dir=$(mktemp -d /var/tmp/rcc-slurm.XXXXXX)
dir2=$(mktemp -d /var/tmp/rcc-slurm2.XXXXXX)
cleanup() {
  slurm_down "$dir"
  SLURM_CONF=$dir2/slurm.conf slurm_down "$dir2"
  rm -rf "$dir" "$dir2"
}
trap cleanup EXIT
slurm_up_local "$dir" || { echo "FAIL: the Slurm cluster did not come up"; exit 1; }

srun_opts="--kill-on-bad-exit=1 --time=10"
for mpi in pmix pmi2 none; do
  if [ $mpi = pmix ]; then source_line='from pmix'; else source_line="from slurm.*not PMIx"; fi
  for n in 1 2 3 4; do
    step='rendezvous through the PMIx server'
    [ $mpi != pmix ] && step="rendezvous through the store at localhost:"
    run_job "srun --mpi=$mpi -n $n launch probe" 0 "launch probe: $n ranks ok" "$source_line" "$step" -- \
      srun --mpi=$mpi -n $n $srun_opts env RCC_DEBUG=INFO "$probe"
    # The p2p suite at 2 and 4 ranks (the probe checks every rank count's placement; the suite
    # itself runs at every count elsewhere).
    case $n in 2 | 4) run_job "srun --mpi=$mpi -n $n p2p suite" 0 -- \
      srun --mpi=$mpi -n $n $srun_opts "$p2p" --gtest_brief=1 ;;
    esac
  done
  # The collectives suite once per convention, at 3 ranks (the shared-memory segment's set-up goes
  # through the launcher's exchange; the suite itself runs at every rank count elsewhere).
  run_job "srun --mpi=$mpi -n 3 collectives suite" 0 -- \
    srun --mpi=$mpi -n 3 $srun_opts env RCC_TEST_QUICK=1 "$coll" --gtest_brief=1
  # MPI programs on rcc's MPI (rcc-mpicc), started by srun.
  run_job "srun --mpi=$mpi -n 4 MPI collectives (rcc's MPI)" 0 "collectives: OK" -- \
    srun --mpi=$mpi -n 4 $srun_opts "$mpi_coll"
done

# Wrong set-ups end in bounded time (RCC_BOOTSTRAP_TIMEOUT=3), naming who is missing.
run_job "srun --mpi=pmix, a rank never joins the fence" fail \
  "rank 2 of 3 did not arrive at the PMIx fence" -- \
  srun --mpi=pmix -n 3 $srun_opts env RCC_TEST_STALL_RANK=2 RCC_BOOTSTRAP_TIMEOUT=3 "$probe"
run_job "srun --mpi=none, a rank never starts" fail "rank 2 of 3 did not arrive at the rendezvous" -- \
  srun --mpi=none -n 3 $srun_opts env RCC_TEST_STALL_RANK=2 RCC_BOOTSTRAP_TIMEOUT=3 "$probe"
# sbatch -n 4 running the program itself (no srun): one task in a job of four.
run_job "a batch job runs 1 task of 4 (no srun)" fail "ranks 1, 2, 3 of 4 did not arrive" -- \
  sh -c "sbatch --wait -n 4 -o '$dir/batch.out' --wrap 'RCC_BOOTSTRAP_TIMEOUT=3 $probe'; status=\$?;
         cat '$dir/batch.out'; exit \$status"

slurm_down "$dir"
unset SLURM_NET
# Two hosts: a slurmd in each of two network namespaces; 2 tasks per node.
if slurm_up_two "$dir2" 79; then
  for mpi in pmix none; do
    run_job "srun --mpi=$mpi -N 2 -n 4 launch probe" 0 "launch probe: 4 ranks ok" -- \
      srun --mpi=$mpi -N 2 -n 4 --ntasks-per-node=2 $srun_opts env RCC_DEBUG=INFO "$probe"
    run_job "srun --mpi=$mpi -N 2 -n 4 p2p suite" 0 -- \
      srun --mpi=$mpi -N 2 -n 4 --ntasks-per-node=2 $srun_opts "$p2p" --gtest_brief=1
    run_job "srun --mpi=$mpi -N 2 -n 4 collectives suite" 0 -- \
      srun --mpi=$mpi -N 2 -n 4 --ntasks-per-node=2 $srun_opts env RCC_TEST_QUICK=1 "$coll" --gtest_brief=1
    run_job "srun --mpi=$mpi -N 2 -n 4 MPI communicators (rcc's MPI)" 0 "comms: OK" -- \
      srun --mpi=$mpi -N 2 -n 4 --ntasks-per-node=2 $srun_opts "$mpi_comms"
  done
else
  echo "FAIL: the two-node Slurm cluster did not come up"
  failed=$((failed + 1))
fi
finish
