// Communicators and groups. A communicator is an rcc communicator (the program's traffic) and a
// shadow made with rcc_comm_dup (the layer's own, which no receive of the program can match), and
// knows its group as ranks of MPI_COMM_WORLD.
#include <algorithm>
#include <cstring>

#include "internal.h"

extern "C" {
struct rcc_mpi_comm rcc_mpi_comm_world, rcc_mpi_comm_self, rcc_mpi_comm_null;
struct rcc_mpi_group rcc_mpi_group_empty, rcc_mpi_group_null;
}

namespace rcc_mpi {
namespace {

struct MarkPredefined {
  MarkPredefined() {
    rcc_mpi_comm_world.predefined = rcc_mpi_comm_self.predefined = rcc_mpi_comm_null.predefined = true;
    rcc_mpi_comm_null.is_null = true;
    rcc_mpi_group_empty.predefined = rcc_mpi_group_null.predefined = true;
    rcc_mpi_group_null.is_null = true;
  }
} mark_predefined;

int check_group(MPI_Group group, const char* function, const char* name) {
  if (group == nullptr || group->is_null) return fail(nullptr, MPI_ERR_GROUP, function, "%s is MPI_GROUP_NULL", name);
  return MPI_SUCCESS;
}

MPI_Group new_group(std::vector<int> world_ranks) {
  if (world_ranks.empty()) return MPI_GROUP_EMPTY;
  auto* group = new rcc_mpi_group;
  group->world_ranks = std::move(world_ranks);
  return group;
}

int index_of(const std::vector<int>& list, int value) {
  auto it = std::find(list.begin(), list.end(), value);
  return it == list.end() ? MPI_UNDEFINED : static_cast<int>(it - list.begin());
}

// A new communicator, or MPI_COMM_NULL for a rank rcc left out.
int wrap_new(MPI_Comm parent, rcc_comm_t created, const char* function, MPI_Comm* newcomm) {
  if (created == nullptr) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  return adopt_comm(parent, created, function, newcomm);
}

// Ranks listed in a group of `size`: each in range, none twice.
int check_rank_list(int size, int n, const int* ranks, const char* function) {
  if (n < 0 || n > size) return fail(nullptr, MPI_ERR_ARG, function, "n %d is not in [0, %d]", n, size);
  if (n > 0 && ranks == nullptr) return fail(nullptr, MPI_ERR_ARG, function, "ranks is NULL");
  std::vector<bool> seen(static_cast<size_t>(size), false);
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= size) {
      return fail(nullptr, MPI_ERR_RANK, function, "ranks[%d] = %d is not a rank of the group (0..%d)", i, ranks[i],
                  size - 1);
    }
    if (seen[static_cast<size_t>(ranks[i])]) {
      return fail(nullptr, MPI_ERR_RANK, function, "ranks[%d] = %d is listed twice", i, ranks[i]);
    }
    seen[static_cast<size_t>(ranks[i])] = true;
  }
  return MPI_SUCCESS;
}

}  // namespace

int fill_comm(MPI_Comm object, MPI_Comm parent, rcc_comm_t comm, const char* function) {
  rcc_status_t status = rcc_comm_rank(comm, &object->rank);
  if (status == RCC_SUCCESS) status = rcc_comm_size(comm, &object->size);
  // The group in MPI_COMM_WORLD's ranks: MPI_COMM_WORLD's own is the identity.
  int world_rank = parent == nullptr ? object->rank : rcc_mpi_comm_world.rank;
  object->world_ranks.assign(static_cast<size_t>(object->size), 0);
  if (status == RCC_SUCCESS) status = rcc_allgather(comm, &world_rank, object->world_ranks.data(), 1, RCC_INT32);
  if (status == RCC_SUCCESS) status = rcc_comm_dup(comm, &object->shadow);
  if (status != RCC_SUCCESS) {
    MPI_Comm reported = parent != nullptr ? parent : nullptr;
    rcc_comm_destroy(comm);
    return fail_rcc(reported, status, function);
  }
  object->comm = comm;
  object->errhandler = parent != nullptr ? parent->errhandler : MPI_ERRORS_ARE_FATAL;
  object->live = true;
  State& s = state();
  std::lock_guard<std::mutex> guard(s.mutex);
  s.comms.push_back(object);
  return MPI_SUCCESS;
}

int adopt_comm(MPI_Comm parent, rcc_comm_t comm, const char* function, MPI_Comm* out) {
  auto* object = new rcc_mpi_comm;
  if (int error = fill_comm(object, parent, comm, function)) {
    delete object;
    return error;
  }
  *out = object;
  return MPI_SUCCESS;
}

void destroy_comm(MPI_Comm comm) {
  {
    State& s = state();
    std::lock_guard<std::mutex> guard(s.mutex);
    s.comms.erase(std::remove(s.comms.begin(), s.comms.end(), comm), s.comms.end());
  }
  comm->worker.reset();  // finishes the jobs it was given, then its thread ends
  comm->live = false;
  rcc_comm_destroy(comm->shadow);
  rcc_comm_destroy(comm->comm);
  comm->shadow = comm->comm = nullptr;
  if (!comm->predefined) delete comm;
}

Worker& worker_of(MPI_Comm comm) {
  std::lock_guard<std::mutex> guard(comm->worker_mutex);
  if (!comm->worker) comm->worker = std::make_unique<Worker>();
  return *comm->worker;
}

}  // namespace rcc_mpi

using namespace rcc_mpi;

extern "C" int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  if (int error = check_comm(comm, "MPI_Comm_rank")) return error;
  if (rank == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_rank", "rank is NULL");
  *rank = comm->rank;
  return MPI_SUCCESS;
}

extern "C" int MPI_Comm_size(MPI_Comm comm, int* size) {
  if (int error = check_comm(comm, "MPI_Comm_size")) return error;
  if (size == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_size", "size is NULL");
  *size = comm->size;
  return MPI_SUCCESS;
}

extern "C" int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  if (int error = check_comm(comm, "MPI_Comm_split")) return error;
  if (newcomm == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_split", "newcomm is NULL");
  if (color < 0 && color != MPI_UNDEFINED) {
    return fail(comm, MPI_ERR_ARG, "MPI_Comm_split", "color %d is negative and not MPI_UNDEFINED", color);
  }
  rcc_comm_t created = nullptr;
  rcc_status_t status = rcc_comm_split(comm->comm, color == MPI_UNDEFINED ? RCC_UNDEFINED : color, key, &created);
  if (status != RCC_SUCCESS) return fail_rcc(comm, status, "MPI_Comm_split");
  return wrap_new(comm, created, "MPI_Comm_split", newcomm);
}

extern "C" int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info, MPI_Comm* newcomm) {
  if (int error = check_comm(comm, "MPI_Comm_split_type")) return error;
  if (newcomm == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_split_type", "newcomm is NULL");
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
    return fail(comm, MPI_ERR_ARG, "MPI_Comm_split_type",
                "split_type %d is neither MPI_COMM_TYPE_SHARED nor MPI_UNDEFINED", split_type);
  }
  int host = RCC_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_SHARED) {
    rcc_status_t status = rcc_comm_host(comm->comm, &host, nullptr);
    if (status != RCC_SUCCESS) return fail_rcc(comm, status, "MPI_Comm_split_type");
  }
  rcc_comm_t created = nullptr;
  rcc_status_t status = rcc_comm_split(comm->comm, host, key, &created);
  if (status != RCC_SUCCESS) return fail_rcc(comm, status, "MPI_Comm_split_type");
  return wrap_new(comm, created, "MPI_Comm_split_type", newcomm);
}

extern "C" int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  if (int error = check_comm(comm, "MPI_Comm_dup")) return error;
  if (newcomm == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_dup", "newcomm is NULL");
  rcc_comm_t created = nullptr;
  rcc_status_t status = rcc_comm_dup(comm->comm, &created);
  if (status != RCC_SUCCESS) return fail_rcc(comm, status, "MPI_Comm_dup");
  return wrap_new(comm, created, "MPI_Comm_dup", newcomm);
}

extern "C" int MPI_Comm_free(MPI_Comm* comm) {
  if (comm == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Comm_free", "comm is NULL");
  if (int error = check_comm(*comm, "MPI_Comm_free")) return error;
  MPI_Comm freed = *comm;
  if (freed->predefined) {
    return fail(freed, MPI_ERR_COMM, "MPI_Comm_free", "%s is predefined and cannot be freed", freed->name.c_str());
  }
  reap_detached(freed);
  const int pending = freed->pending.load();
  if (pending > 0) {
    return fail(freed, MPI_ERR_COMM, "MPI_Comm_free",
                "%d request%s on the communicator %s still pending: complete them (MPI_Wait, MPI_Test) first", pending,
                pending == 1 ? "" : "s", pending == 1 ? "is" : "are");
  }
  destroy_comm(freed);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

extern "C" int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  if (int error = check_comm(comm1, "MPI_Comm_compare")) return error;
  if (int error = check_comm(comm2, "MPI_Comm_compare")) return error;
  if (result == nullptr) return fail(comm1, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
  if (comm1 == comm2) {
    *result = MPI_IDENT;
  } else if (comm1->world_ranks == comm2->world_ranks) {
    *result = MPI_CONGRUENT;
  } else {
    std::vector<int> a = comm1->world_ranks, b = comm2->world_ranks;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    *result = a == b ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

extern "C" int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  if (int error = check_comm(comm, "MPI_Comm_create")) return error;
  if (int error = check_group(group, "MPI_Comm_create", "group")) return error;
  if (newcomm == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_create", "newcomm is NULL");
  for (size_t i = 0; i < group->world_ranks.size(); ++i) {
    if (index_of(comm->world_ranks, group->world_ranks[i]) == MPI_UNDEFINED) {
      return fail(comm, MPI_ERR_GROUP, "MPI_Comm_create", "rank %zu of group is not in the communicator", i);
    }
  }
  // The members, ranked in the group's order; the others get MPI_COMM_NULL.
  const int position = index_of(group->world_ranks, rcc_mpi_comm_world.rank);
  rcc_comm_t created = nullptr;
  rcc_status_t status = rcc_comm_split(comm->comm, position == MPI_UNDEFINED ? RCC_UNDEFINED : 0, position, &created);
  if (status != RCC_SUCCESS) return fail_rcc(comm, status, "MPI_Comm_create");
  return wrap_new(comm, created, "MPI_Comm_create", newcomm);
}

extern "C" int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  if (int error = check_comm(comm, "MPI_Comm_group")) return error;
  if (group == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
  *group = new_group(comm->world_ranks);
  return MPI_SUCCESS;
}

extern "C" int MPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  if (int error = check_comm(comm, "MPI_Comm_set_name")) return error;
  if (comm_name == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_set_name", "comm_name is NULL");
  comm->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

extern "C" int MPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  if (int error = check_comm(comm, "MPI_Comm_get_name")) return error;
  if (comm_name == nullptr || resultlen == nullptr) {
    return fail(comm, MPI_ERR_ARG, "MPI_Comm_get_name", "comm_name or resultlen is NULL");
  }
  std::strcpy(comm_name, comm->name.c_str());
  *resultlen = static_cast<int>(comm->name.size());
  return MPI_SUCCESS;
}

extern "C" int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  if (int error = check_initialized("MPI_Group_incl")) return error;
  if (int error = check_group(group, "MPI_Group_incl", "group")) return error;
  if (newgroup == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Group_incl", "newgroup is NULL");
  const int size = static_cast<int>(group->world_ranks.size());
  if (int error = check_rank_list(size, n, ranks, "MPI_Group_incl")) return error;
  std::vector<int> members;
  for (int i = 0; i < n; ++i) members.push_back(group->world_ranks[static_cast<size_t>(ranks[i])]);
  *newgroup = new_group(std::move(members));
  return MPI_SUCCESS;
}

extern "C" int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  if (int error = check_initialized("MPI_Group_excl")) return error;
  if (int error = check_group(group, "MPI_Group_excl", "group")) return error;
  if (newgroup == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Group_excl", "newgroup is NULL");
  const int size = static_cast<int>(group->world_ranks.size());
  if (int error = check_rank_list(size, n, ranks, "MPI_Group_excl")) return error;
  std::vector<bool> excluded(static_cast<size_t>(size), false);
  for (int i = 0; i < n; ++i) excluded[static_cast<size_t>(ranks[i])] = true;
  std::vector<int> members;
  for (int r = 0; r < size; ++r) {
    if (!excluded[static_cast<size_t>(r)]) members.push_back(group->world_ranks[static_cast<size_t>(r)]);
  }
  *newgroup = new_group(std::move(members));
  return MPI_SUCCESS;
}

extern "C" int MPI_Group_rank(MPI_Group group, int* rank) {
  if (int error = check_initialized("MPI_Group_rank")) return error;
  if (int error = check_group(group, "MPI_Group_rank", "group")) return error;
  if (rank == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
  *rank = index_of(group->world_ranks, rcc_mpi_comm_world.rank);
  return MPI_SUCCESS;
}

extern "C" int MPI_Group_size(MPI_Group group, int* size) {
  if (int error = check_initialized("MPI_Group_size")) return error;
  if (int error = check_group(group, "MPI_Group_size", "group")) return error;
  if (size == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
  *size = static_cast<int>(group->world_ranks.size());
  return MPI_SUCCESS;
}

extern "C" int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
  const char* function = "MPI_Group_translate_ranks";
  if (int error = check_initialized(function)) return error;
  if (int error = check_group(group1, function, "group1")) return error;
  if (int error = check_group(group2, function, "group2")) return error;
  if (n < 0) return fail(nullptr, MPI_ERR_ARG, function, "n %d is negative", n);
  if (n > 0 && (ranks1 == nullptr || ranks2 == nullptr)) {
    return fail(nullptr, MPI_ERR_ARG, function, "ranks1 or ranks2 is NULL");
  }
  const int size1 = static_cast<int>(group1->world_ranks.size());
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) continue;
    if (ranks1[i] < 0 || ranks1[i] >= size1) {
      return fail(nullptr, MPI_ERR_RANK, function, "ranks1[%d] = %d is not a rank of group1 (0..%d)", i, ranks1[i],
                  size1 - 1);
    }
  }
  for (int i = 0; i < n; ++i) {
    ranks2[i] = ranks1[i] == MPI_PROC_NULL
                    ? MPI_PROC_NULL
                    : index_of(group2->world_ranks, group1->world_ranks[static_cast<size_t>(ranks1[i])]);
  }
  return MPI_SUCCESS;
}

extern "C" int MPI_Group_free(MPI_Group* group) {
  if (int error = check_initialized("MPI_Group_free")) return error;
  if (group == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
  if (int error = check_group(*group, "MPI_Group_free", "group")) return error;
  if (!(*group)->predefined) delete *group;
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}
