// Hands a held job (worker.h) to its worker once it has been held kHeldLongest, so that a program
// that issues a small async collective and then computes before waiting for it does not keep its
// peers waiting through the whole computation. One thread per process, started with the first
// worker and stopped with the last. It sleeps until a job is held, then looks every kHeldLongest
// while jobs keep being held, and sleeps again after kIdleRounds looks without one: a loop of small
// blocking calls wakes it once per kHeldLongest, not once per call.
#pragma once

#include <chrono>

namespace rcc_torch::held_job_watch {

constexpr std::chrono::milliseconds kHeldLongest{1};
constexpr int kIdleRounds = 10;

void start();      // with each worker
void stop();       // with each worker's stop; the thread ends with the last
void note_held();  // a job was just held: wakes the thread if it sleeps

}  // namespace rcc_torch::held_job_watch
