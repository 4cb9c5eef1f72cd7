/* A C program using the installed rcc: a one-rank communicator and an allreduce. */
#include <rcc/rcc.h>
#include <stdio.h>

int main(void) {
  rcc_unique_id_t id;
  rcc_comm_t comm;
  float values[3] = {1.5f, 2.5f, -4.0f};
  if (rcc_get_unique_id(&id) != RCC_SUCCESS || rcc_comm_init_rank(&comm, id, 0, 1) != RCC_SUCCESS) {
    fprintf(stderr, "init failed: %s\n", rcc_last_error());
    return 1;
  }
  if (rcc_allreduce(comm, values, values, 3, RCC_FLOAT32, RCC_SUM) != RCC_SUCCESS || values[2] != -4.0f) {
    fprintf(stderr, "allreduce failed: %s\n", rcc_last_error());
    return 1;
  }
  if (rcc_comm_destroy(comm) != RCC_SUCCESS) return 1;
  printf("consumer ok (rcc %d.%d)\n", RCC_VERSION_MAJOR, RCC_VERSION_MINOR);
  return 0;
}
