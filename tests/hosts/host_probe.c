/* Prints which host rcc puts this rank on, then checks an allreduce across the job (the host
 * layout decides whether it runs through shared memory, levels or messages):
 *   rank R host H of N name NAME ok
 * Exit status 1 on any failure. Public C API only. */
#include <rcc/rcc.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
  rcc_comm_t comm = NULL;
  if (rcc_comm_init(&comm) != RCC_SUCCESS) {
    fprintf(stderr, "host_probe: rcc_comm_init: %s\n", rcc_last_error());
    return 1;
  }
  int rank = -1, size = 0, host = -1, hosts = 0;
  rcc_comm_rank(comm, &rank);
  rcc_comm_size(comm, &size);
  if (rcc_comm_host(comm, &host, &hosts) != RCC_SUCCESS) {
    fprintf(stderr, "host_probe: rcc_comm_host: %s\n", rcc_last_error());
    return 1;
  }
  int64_t mine[2] = {rank + 1, host}, sums[2] = {0, 0};
  int ok = rcc_allreduce(comm, mine, sums, 2, RCC_INT64, RCC_SUM) == RCC_SUCCESS &&
           sums[0] == (int64_t)size * (size + 1) / 2;
  char name[256] = "?";
  gethostname(name, sizeof name - 1);
  printf("rank %d host %d of %d name %s %s\n", rank, host, hosts, name, ok ? "ok" : "WRONG");
  fflush(stdout);
  if (rcc_comm_destroy(comm) != RCC_SUCCESS) ok = 0;
  return ok ? 0 : 1;
}
