// read_across and write_across against a real second process (fork): they reach the child's bytes,
// not this process's copy-on-write ones, across many pages and at odd addresses, and report errors
// as errnos.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "shm/cross_memory.h"

namespace {

constexpr size_t kBytes = (size_t{8} << 20) + 4093;  // many pages, not a whole number of them

uint8_t child_byte(size_t i) { return static_cast<uint8_t>((i * 167 + 13) % 253); }

// A child process that rewrites `buffer` with child_byte, then waits for the parent to close its pipe.
class Child {
 public:
  explicit Child(std::vector<uint8_t>& buffer) {
    int ready[2], done[2];
    if (pipe(ready) != 0 || pipe(done) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(done[1]);  // else the read below never sees the parent's end close
      close(ready[0]);
      for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = child_byte(i);
      char byte = 1;
      (void)!write(ready[1], &byte, 1);
      (void)!read(done[0], &byte, 1);  // returns once the parent closed its end
      _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    done_ = done[1];
    char byte = 0;
    (void)!read(ready[0], &byte, 1);
    close(ready[0]);
  }
  ~Child() { finish(); }
  void finish() {
    if (pid_ <= 0) return;
    close(done_);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int done_ = -1;
};

TEST(ReadAcross, ReadsTheOtherProcessesBytes) {
  std::vector<uint8_t> buffer(kBytes, 0x11);
  Child child(buffer);
  ASSERT_GT(child.pid(), 0);
  std::vector<uint8_t> copy(kBytes, 0);
  const int error = rcc::shm::read_across(child.pid(), buffer.data(), copy.data(), kBytes);
  // Where the system forbids it, rcc goes without (the collectives_test.cma variant fails instead).
  if (error == EPERM || error == ENOSYS)
    GTEST_SKIP() << "process_vm_readv is not allowed here: " << std::strerror(error);
  ASSERT_EQ(error, 0) << std::strerror(error);
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(copy[i], child_byte(i)) << "byte " << i;
  // From an odd address to an odd address, a few bytes and a page and a bit.
  for (size_t offset : {1, 4095, 12345}) {
    for (size_t length : {1, 7, 4097}) {
      std::vector<uint8_t> part(length + 2, 0xee);
      ASSERT_EQ(rcc::shm::read_across(child.pid(), buffer.data() + offset, part.data() + 1, length), 0);
      EXPECT_EQ(part[0], 0xee);
      EXPECT_EQ(part[length + 1], 0xee);
      for (size_t i = 0; i < length; ++i) ASSERT_EQ(part[1 + i], child_byte(offset + i)) << offset << "+" << i;
    }
  }
  EXPECT_EQ(rcc::shm::read_across(child.pid(), buffer.data(), copy.data(), 0), 0);
}

TEST(ReadAcross, ErrorsAreErrnos) {
  // A page followed by a hole, in the child too (it inherits the mapping).
  auto* page = static_cast<uint8_t*>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(page, MAP_FAILED);
  ASSERT_EQ(munmap(page + 4096, 4096), 0);
  std::vector<uint8_t> buffer(4096, 0x11);
  Child child(buffer);
  ASSERT_GT(child.pid(), 0);
  uint8_t byte = 0;
  const int error = rcc::shm::read_across(child.pid(), buffer.data(), &byte, 1);
  if (error == EPERM || error == ENOSYS)
    GTEST_SKIP() << "process_vm_readv is not allowed here: " << std::strerror(error);
  EXPECT_EQ(rcc::shm::read_across(child.pid(), nullptr, &byte, 1), EFAULT);
  // A read that runs into the hole copies up to it and then reports the fault.
  uint8_t two[16] = {};
  EXPECT_EQ(rcc::shm::read_across(child.pid(), page + 4088, two, sizeof two), EFAULT);
  EXPECT_EQ(rcc::shm::read_across(child.pid(), page + 4088, two, 8), 0);
  const pid_t gone = child.pid();
  child.finish();
  EXPECT_EQ(rcc::shm::read_across(gone, buffer.data(), &byte, 1), ESRCH);
  munmap(page, 4096);
}

// What the parent writes into the child, different from child_byte everywhere.
uint8_t parent_byte(size_t i) { return static_cast<uint8_t>(child_byte(i) + 1 + i % 7); }

TEST(WriteAcross, WritesIntoTheOtherProcess) {
  std::vector<uint8_t> buffer(kBytes, 0x11);
  Child child(buffer);
  ASSERT_GT(child.pid(), 0);
  std::vector<uint8_t> mine(kBytes);
  for (size_t i = 0; i < kBytes; ++i) mine[i] = parent_byte(i);
  const int error = rcc::shm::write_across(child.pid(), mine.data(), buffer.data(), kBytes);
  if (error == EPERM || error == ENOSYS)
    GTEST_SKIP() << "process_vm_writev is not allowed here: " << std::strerror(error);
  ASSERT_EQ(error, 0) << std::strerror(error);
  // This process's copy of the buffer is untouched; the child's holds what was written.
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(buffer[i], 0x11) << "byte " << i;
  std::vector<uint8_t> back(kBytes, 0);
  ASSERT_EQ(rcc::shm::read_across(child.pid(), buffer.data(), back.data(), kBytes), 0);
  for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(back[i], parent_byte(i)) << "byte " << i;
  // A few bytes and a page and a bit, from odd addresses to odd addresses: nothing around them moves.
  for (size_t offset : {1, 4095, 12345}) {
    for (size_t length : {1, 7, 4097}) {
      const std::vector<uint8_t> part(length, static_cast<uint8_t>(offset + length));
      ASSERT_EQ(rcc::shm::write_across(child.pid(), part.data(), buffer.data() + offset, length), 0);
      std::vector<uint8_t> seen(length + 2, 0);
      ASSERT_EQ(rcc::shm::read_across(child.pid(), buffer.data() + offset - 1, seen.data(), length + 2), 0);
      EXPECT_EQ(seen[0], parent_byte(offset - 1)) << offset << "+" << length;
      EXPECT_EQ(seen[length + 1], parent_byte(offset + length)) << offset << "+" << length;
      for (size_t i = 0; i < length; ++i) ASSERT_EQ(seen[1 + i], part[i]) << offset << "+" << i;
      // Put the parent's bytes back for the next case's neighbours.
      ASSERT_EQ(rcc::shm::write_across(child.pid(), mine.data() + offset, buffer.data() + offset, length), 0);
    }
  }
  EXPECT_EQ(rcc::shm::write_across(child.pid(), mine.data(), buffer.data(), 0), 0);
}

TEST(WriteAcross, ErrorsAreErrnos) {
  std::vector<uint8_t> buffer(4096, 0x11);
  Child child(buffer);
  ASSERT_GT(child.pid(), 0);
  const uint8_t byte = 7;
  const int error = rcc::shm::write_across(child.pid(), &byte, buffer.data(), 1);
  if (error == EPERM || error == ENOSYS)
    GTEST_SKIP() << "process_vm_writev is not allowed here: " << std::strerror(error);
  ASSERT_EQ(error, 0);
  EXPECT_EQ(rcc::shm::write_across(child.pid(), &byte, nullptr, 1), EFAULT);
  // Read-only memory in the child (the code of this program) is not written.
  EXPECT_EQ(rcc::shm::write_across(child.pid(), &byte, reinterpret_cast<void*>(&child_byte), 1), EFAULT);
  const pid_t gone = child.pid();
  child.finish();
  EXPECT_EQ(rcc::shm::write_across(gone, &byte, buffer.data(), 1), ESRCH);
}

}  // namespace
