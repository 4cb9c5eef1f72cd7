/* rcc_comm_init_store from C: the ranks meet through a store of the caller's, here one file per
 * key in a shared directory (a stand-in for a framework's own store). Rank 0 starts ranks 1..N-1
 * as copies of itself; each initialises with the store, checks an allreduce, a split and a
 * broadcast, destroys, and writes done.RANK. Rank 0 then checks what the store holds:
 *   store_init_test N DIR counted   add and remove given: every key rcc wrote is gone
 *   store_init_test N DIR plain     neither given: the keys stay (and the job works the same)
 *   store_init_test 1 DIR bad       bad stores are refused, naming the callback
 *   store_init_test 2 DIR missing   rank 0 alone: rank 1 never comes, and the init fails within
 *                                   RCC_BOOTSTRAP_TIMEOUT (the test sets 2 s), naming rank 1
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <rcc/rcc.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static const char* g_dir;

/* DIR/k.<key with '/' as '%'> */
static void path_of(const char* key, char* path, size_t size) {
  int n = snprintf(path, size, "%s/k.", g_dir);
  for (const char* c = key; *c != '\0' && (size_t)n + 2 < size; ++c) path[n++] = *c == '/' ? '%' : *c;
  path[n] = '\0';
}

static rcc_status_t file_set(void* context, const char* key, const void* value, size_t size) {
  (void)context;
  char path[512], temp[600];
  path_of(key, path, sizeof path);
  snprintf(temp, sizeof temp, "%s.tmp.%d", path, (int)getpid());
  FILE* f = fopen(temp, "wb");
  if (f == NULL) return RCC_ERR_BOOTSTRAP;
  int ok = fwrite(value, 1, size, f) == size;
  ok = fclose(f) == 0 && ok;
  if (!ok || rename(temp, path) != 0) return RCC_ERR_BOOTSTRAP;
  return RCC_SUCCESS;
}

static rcc_status_t file_get(void* context, const char* key, int64_t timeout_ms, void** value, size_t* size) {
  (void)context;
  char path[512];
  path_of(key, path, sizeof path);
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    FILE* f = fopen(path, "rb");
    if (f != NULL) {
      fseek(f, 0, SEEK_END);
      long length = ftell(f);
      fseek(f, 0, SEEK_SET);
      void* bytes = length > 0 ? malloc((size_t)length) : NULL;
      size_t got = length > 0 ? fread(bytes, 1, (size_t)length, f) : 0;
      fclose(f);
      if ((long)got != length) {
        free(bytes);
        return RCC_ERR_BOOTSTRAP;
      }
      *value = bytes;
      *size = (size_t)length;
      return RCC_SUCCESS;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t waited = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (waited >= timeout_ms) return RCC_ERR_TIMEOUT;
    usleep(1000);
  }
}

/* A counter file, changed under an exclusive lock on itself. */
static rcc_status_t file_add(void* context, const char* key, int64_t amount, int64_t* result) {
  (void)context;
  char path[512];
  path_of(key, path, sizeof path);
  int fd = open(path, O_RDWR | O_CREAT, 0600);
  if (fd < 0 || flock(fd, LOCK_EX) != 0) return RCC_ERR_BOOTSTRAP;
  char text[32] = {0};
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  long long counter = n > 0 ? atoll(text) : 0;
  counter += amount;
  int length = snprintf(text, sizeof text, "%lld", counter);
  int ok = ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)length, 0) == length;
  close(fd);
  *result = counter;
  return ok ? RCC_SUCCESS : RCC_ERR_BOOTSTRAP;
}

static rcc_status_t file_remove(void* context, const char* key) {
  (void)context;
  char path[512];
  path_of(key, path, sizeof path);
  return unlink(path) == 0 || errno == ENOENT ? RCC_SUCCESS : RCC_ERR_BOOTSTRAP;
}

static int failed(int rank, const char* what, rcc_status_t status) {
  fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what, rcc_status_string(status), rcc_last_error());
  return 1;
}

static int run_rank(int rank, int size, int counted) {
  rcc_store_t store = {NULL, file_set, file_get, counted ? file_add : NULL, counted ? file_remove : NULL};
  for (int job = 0; job < 2; ++job) { /* two jobs one after the other on one store */
    rcc_comm_t comm;
    rcc_status_t status = rcc_comm_init_store(&comm, &store, rank, size);
    if (status != RCC_SUCCESS) return failed(rank, "rcc_comm_init_store", status);
    int me = -1, n = 0;
    rcc_comm_rank(comm, &me);
    rcc_comm_size(comm, &n);
    if (me != rank || n != size) {
      fprintf(stderr, "rank %d: the communicator says rank %d of %d\n", rank, me, n);
      return 1;
    }
    long long value = rank + 1, sum = 0;
    if ((status = rcc_allreduce(comm, &value, &sum, 1, RCC_INT64, RCC_SUM)) != RCC_SUCCESS)
      return failed(rank, "rcc_allreduce", status);
    if (sum != (long long)size * (size + 1) / 2) {
      fprintf(stderr, "rank %d: allreduce gave %lld\n", rank, sum);
      return 1;
    }
    rcc_comm_t half;
    if ((status = rcc_comm_split(comm, rank % 2, rank, &half)) != RCC_SUCCESS) return failed(rank, "split", status);
    int word = rank == 0 ? 4242 + job : 0;
    if ((status = rcc_broadcast(comm, &word, 1, RCC_INT32, 0)) != RCC_SUCCESS) return failed(rank, "broadcast", status);
    if (word != 4242 + job) {
      fprintf(stderr, "rank %d: broadcast gave %d\n", rank, word);
      return 1;
    }
    if ((status = rcc_comm_destroy(half)) != RCC_SUCCESS) return failed(rank, "destroy half", status);
    if ((status = rcc_comm_destroy(comm)) != RCC_SUCCESS) return failed(rank, "destroy", status);
  }
  char path[512];
  snprintf(path, sizeof path, "%s/done.%d", g_dir, rank);
  FILE* f = fopen(path, "w");
  if (f != NULL) fclose(f);
  return 0;
}

/* Files of rcc's in the store once every rank is done. */
static int keys_left(int size) {
  char path[512];
  for (int r = 0; r < size; ++r) {
    snprintf(path, sizeof path, "%s/done.%d", g_dir, r);
    for (int tries = 0; access(path, F_OK) != 0; ++tries) {
      if (tries > 60000) return -1;
      usleep(1000);
    }
  }
  int keys = 0;
  DIR* dir = opendir(g_dir);
  for (struct dirent* e = readdir(dir); e != NULL; e = readdir(dir)) {
    if (strncmp(e->d_name, "k.", 2) == 0) {
      if (keys < 5) printf("left: %s\n", e->d_name);
      ++keys;
    }
  }
  closedir(dir);
  return keys;
}

static int bad_stores(void) {
  rcc_store_t store = {NULL, NULL, file_get, NULL, NULL};
  rcc_comm_t comm;
  int bad = 0;
  if (rcc_comm_init_store(&comm, &store, 0, 1) != RCC_ERR_INVALID_ARGUMENT || !strstr(rcc_last_error(), "store->set")) {
    fprintf(stderr, "a store without set: %s\n", rcc_last_error());
    bad = 1;
  }
  store.set = file_set;
  store.add = file_add;
  if (rcc_comm_init_store(&comm, &store, 0, 1) != RCC_ERR_INVALID_ARGUMENT ||
      !strstr(rcc_last_error(), "store->remove")) {
    fprintf(stderr, "add without remove: %s\n", rcc_last_error());
    bad = 1;
  }
  store.add = NULL;
  if (rcc_comm_init_store(&comm, NULL, 0, 1) != RCC_ERR_INVALID_ARGUMENT || !strstr(rcc_last_error(), "store")) {
    fprintf(stderr, "no store: %s\n", rcc_last_error());
    bad = 1;
  }
  if (rcc_comm_init_store(&comm, &store, 2, 2) != RCC_ERR_INVALID_ARGUMENT || !strstr(rcc_last_error(), "rank 2")) {
    fprintf(stderr, "rank 2 of 2: %s\n", rcc_last_error());
    bad = 1;
  }
  if (!bad) printf("store_init_test: every bad store refused\n");
  return bad;
}

static int missing_rank(void) {
  mkdir(g_dir, 0700);
  rcc_store_t store = {NULL, file_set, file_get, NULL, NULL};
  rcc_comm_t comm = NULL;
  const time_t began = time(NULL);
  const rcc_status_t status = rcc_comm_init_store(&comm, &store, 0, 2);
  const long took = (long)(time(NULL) - began);
  if (status == RCC_SUCCESS || !strstr(rcc_last_error(), "rank 1") || took > 30) {
    fprintf(stderr, "rank 1 never came: %s after %ld s: %s\n", rcc_status_string(status), took, rcc_last_error());
    return 1;
  }
  printf("store_init_test: rank 1 never came: %s after %ld s: %s\n", rcc_status_string(status), took, rcc_last_error());
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s SIZE DIR counted|plain|bad [RANK]\n", argv[0]);
    return 2;
  }
  const int size = atoi(argv[1]);
  g_dir = argv[2];
  const int counted = strcmp(argv[3], "counted") == 0;
  if (strcmp(argv[3], "bad") == 0) return bad_stores();
  if (strcmp(argv[3], "missing") == 0) return missing_rank();
  if (argc > 4) return run_rank(atoi(argv[4]), size, counted);
  mkdir(g_dir, 0700);
  pid_t pids[64];
  for (int r = 1; r < size && r < 64; ++r) {
    char rank_text[16];
    snprintf(rank_text, sizeof rank_text, "%d", r);
    char* child[] = {argv[0], argv[1], argv[2], argv[3], rank_text, NULL};
    if (posix_spawn(&pids[r], argv[0], NULL, NULL, child, environ) != 0) return 1;
  }
  int result = run_rank(0, size, counted);
  for (int r = 1; r < size && r < 64; ++r) {
    int status = 0;
    waitpid(pids[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result = 1;
  }
  if (result != 0) return result;
  const int left = keys_left(size);
  printf("store_init_test: %d ranks, %s store, %d key(s) left after 2 jobs\n", size, argv[3], left);
  if (counted && left != 0) return 1;
  if (!counted && size > 1 && left <= 0) return 1; /* without counting the keys stay: the store was used */
  return 0;
}
