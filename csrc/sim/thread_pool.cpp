#include "sim/thread_pool.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace foo::sim {
namespace {

unsigned threads_from_env() {
  const char* v = std::getenv("TORCH_FOO_SIM_THREADS");
  if (!v || !*v) {
    const unsigned hc = std::thread::hardware_concurrency();
    return hc ? hc : 1;
  }
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (errno || *end || n < 1 || n > 1024) {
    throw std::runtime_error(std::string("TORCH_FOO_SIM_THREADS='") + v +
                             "' is invalid: expected an integer from 1 to 1024");
  }
  return static_cast<unsigned>(n);
}

// Lives on the caller's stack; the caller returns only when no helper is inside it.
struct Job {
  uint64_t count;
  void (*run)(void*, uint64_t);
  void* ctx;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::atomic<int> inside{0};  // helpers that took the job and have not left it
  unsigned wanted = 0;         // helpers still to hand it to; guarded by the pool's mutex
  std::mutex mu;
  std::condition_variable left;
  std::exception_ptr error;

  void work() {
    for (;;) {
      const uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count || failed.load(std::memory_order_relaxed)) return;
      try {
        run(ctx, i);
      } catch (...) {
        std::lock_guard<std::mutex> lk(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  }
};

class Pool {
 public:
  explicit Pool(unsigned helpers) {
    for (unsigned i = 0; i < helpers; ++i) std::thread([this] { serve(); }).detach();
    helpers_ = helpers;
  }
  unsigned helpers() const { return helpers_; }

  void offer(Job* job, unsigned want) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      job->wanted = want;
      queue_.push_back(job);
    }
    if (want >= helpers_) {
      cv_.notify_all();
    } else {
      for (unsigned i = 0; i < want; ++i) cv_.notify_one();
    }
  }
  void withdraw(Job* job) {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (*it == job) {
        queue_.erase(it);
        break;
      }
    }
  }

 private:
  void serve() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [&] { return !queue_.empty(); });
      Job* job = queue_.front();
      if (--job->wanted == 0) queue_.pop_front();
      job->inside.fetch_add(1);  // under mu_: the owner withdraws the job under mu_ before waiting
      lk.unlock();
      job->work();
      {
        std::lock_guard<std::mutex> jl(job->mu);
        if (job->inside.fetch_sub(1) == 1) job->left.notify_all();
      }  // `job` may be gone from here on
      lk.lock();
    }
  }

  unsigned helpers_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job*> queue_;
};

Pool& pool() {
  // Leaked on purpose, threads detached: streams' workers may still launch during process exit.
  static Pool* p = new Pool(sim_threads() - 1);
  return *p;
}

}  // namespace

unsigned sim_threads() {
  static const unsigned n = threads_from_env();
  return n;
}

void parallel_for(uint64_t count, unsigned max_helpers, void (*run)(void*, uint64_t), void* ctx) {
  if (count == 0) return;
  Pool& p = pool();
  uint64_t want = count - 1;
  if (want > max_helpers) want = max_helpers;
  if (want > p.helpers()) want = p.helpers();
  if (want == 0) {  // not worth waking anyone: no locks, no atomics
    for (uint64_t i = 0; i < count; ++i) run(ctx, i);
    return;
  }
  Job job;
  job.count = count;
  job.run = run;
  job.ctx = ctx;
  p.offer(&job, static_cast<unsigned>(want));
  job.work();
  p.withdraw(&job);
  {
    std::unique_lock<std::mutex> lk(job.mu);
    job.left.wait(lk, [&] { return job.inside.load() == 0; });
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace foo::sim
