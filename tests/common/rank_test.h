// Multi-rank GoogleTest programs: every rank runs the same tests under rccrun (or any launcher);
// rank_main.cc creates one communicator before the tests and destroys it after. (The namespace is
// ranktest, not rcc_test: rcc_test is the public C function.)
#pragma once

#include <gtest/gtest.h>

#include "rcc/rcc.h"

namespace ranktest {

rcc_comm_t comm();
int rank();
int size();

}  // namespace ranktest

// Asserts an rcc call succeeded, printing rcc_last_error() otherwise.
#define RCC_ASSERT_OK(expr)                                                                  \
  do {                                                                                       \
    rcc_status_t ranktest_status_ = (expr);                                                  \
    ASSERT_EQ(ranktest_status_, RCC_SUCCESS)                                                 \
        << #expr << ": " << rcc_status_string(ranktest_status_) << ": " << rcc_last_error(); \
  } while (0)
#define RCC_EXPECT_OK(expr)                                                                  \
  do {                                                                                       \
    rcc_status_t ranktest_status_ = (expr);                                                  \
    EXPECT_EQ(ranktest_status_, RCC_SUCCESS)                                                 \
        << #expr << ": " << rcc_status_string(ranktest_status_) << ": " << rcc_last_error(); \
  } while (0)
