// Runs the hand-written reference kernels of bench/reference/ on the problems
// of bench/programs/ and reports their device time per step. Inputs come from
// files that bench/compare-reference writes (the programs' own inputs), and
// the results go back to files it compares with NumPy; this program does no
// checking of its own.
//
//   npvk_reference_bench black_scholes --n N --inputs DIR --outputs DIR
//       --rates r0,r1,... --volatility V [--repeat R]
//   npvk_reference_bench heat_equation --n N --steps K --alpha A
//       --inputs DIR --outputs DIR [--repeat R]
//
// Inputs and outputs are raw little-endian float64 files (NumPy's tofile):
// black_scholes reads S, X, T and writes call, put (the sums over the
// rates); heat_equation reads u ((n+2) x (n+2)) and writes u after K steps.
// Every repetition restores the inputs and runs the whole problem as one
// submission, one dispatch per step, as npvk does in the timed region. Prints
// one JSON line: each step's device seconds (timestamp queries) and the wall
// time of each submission. Exit status 3 when the validation layer reported,
// 77 when there is no device that can run the kernels.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "reference_device.hpp"

#ifndef NPVK_REFERENCE_SHADER_DIR
#error "NPVK_REFERENCE_SHADER_DIR: the directory of the .comp files"
#endif

namespace npvk::bench {
namespace {

struct Options {
  std::string program;
  uint64_t n = 0;
  uint32_t steps = 0;
  uint32_t repeat = 1;
  std::vector<double> rates;
  double volatility = 0, alpha = 0;
  std::string inputs, outputs, shader_dir = NPVK_REFERENCE_SHADER_DIR;
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr, "npvk_reference_bench: %s (see the comment in reference_bench.cpp)\n", why);
  std::exit(2);
}

// strtod reads Python's repr() of a float back to the same double.
std::vector<double> parse_list(const std::string &text) {
  std::vector<double> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    values.push_back(std::strtod(item.c_str(), nullptr));
  return values;
}

Options parse(int argc, char **argv) {
  if (argc < 2) usage("no program");
  Options o;
  o.program = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) usage("a flag without its value");
    std::string value = argv[++i];
    if (flag == "--n")
      o.n = std::strtoull(value.c_str(), nullptr, 10);
    else if (flag == "--steps")
      o.steps = uint32_t(std::strtoul(value.c_str(), nullptr, 10));
    else if (flag == "--repeat")
      o.repeat = uint32_t(std::strtoul(value.c_str(), nullptr, 10));
    else if (flag == "--rates")
      o.rates = parse_list(value);
    else if (flag == "--volatility")
      o.volatility = std::strtod(value.c_str(), nullptr);
    else if (flag == "--alpha")
      o.alpha = std::strtod(value.c_str(), nullptr);
    else if (flag == "--inputs")
      o.inputs = value;
    else if (flag == "--outputs")
      o.outputs = value;
    else if (flag == "--shader-dir")
      o.shader_dir = value;
    else
      usage(("unknown flag " + flag).c_str());
  }
  if (o.n == 0 || o.inputs.empty() || o.outputs.empty() || o.repeat == 0) usage("missing flags");
  if (o.program == "black_scholes") o.steps = uint32_t(o.rates.size());
  if (o.steps == 0) usage("no steps (or no rates)");
  return o;
}

std::vector<double> load(const std::string &path, uint64_t elements) {
  std::vector<double> values(elements);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char *>(values.data()), std::streamsize(elements * sizeof(double)));
  NPVK_REQUIRE(in && in.peek() == EOF, NPVK_ERR_INVALID_ARGUMENT,
               path + ": not " + std::to_string(elements) + " float64 values");
  return values;
}

void save(const std::string &path, const std::vector<double> &values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(values.data()),
            std::streamsize(values.size() * sizeof(double)));
  NPVK_REQUIRE(bool(out), NPVK_ERR_INVALID_ARGUMENT, "cannot write " + path);
}

uint64_t bits(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

struct Timings {
  std::vector<double> step_seconds;        // every dispatch of every repetition
  std::vector<double> submission_seconds;  // host wall time of each repetition's submission
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void run_timed(ReferenceDevice &dev, std::vector<vk::Dispatch> &batch, Timings &t) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<double> steps = dev.run(batch);
  t.submission_seconds.push_back(seconds_since(t0));
  t.step_seconds.insert(t.step_seconds.end(), steps.begin(), steps.end());
}

Timings black_scholes(ReferenceDevice &dev, const Options &o) {
  const uint64_t n = o.n;
  Array S(dev.device(), n), X(dev.device(), n), T(dev.device(), n);
  Array call(dev.device(), n), put(dev.device(), n);
  S.upload(load(o.inputs + "/S.f64", n));
  X.upload(load(o.inputs + "/X.f64", n));
  T.upload(load(o.inputs + "/T.f64", n));
  VkPipeline pipeline = dev.pipeline(o.shader_dir + "/black_scholes.comp");
  const std::vector<double> zeros(n, 0.0);
  Timings t;
  for (uint32_t rep = 0; rep < o.repeat; ++rep) {
    call.upload(zeros);
    put.upload(zeros);
    std::vector<vk::Dispatch> batch;
    for (double r : o.rates) {
      vk::Dispatch d;
      d.pipeline = pipeline;
      const double v = o.volatility;
      const double rv = r + 0.5 * v * v;  // the Python scalar of price_numpy()
      const uint64_t operands[8] = {S.address(),   X.address(), T.address(), call.address(),
                                    put.address(), bits(r),     bits(v),     bits(rv)};
      std::memcpy(d.push.operand, operands, sizeof operands);
      d.push.count = n;
      d.push.tables = dev.tables();
      d.groups = dev.groups((n + kWorkgroupSize - 1) / kWorkgroupSize);
      d.accesses = {access(S, false), access(X, false), access(T, false), access(call, true),
                    access(put, true)};
      batch.push_back(d);
    }
    run_timed(dev, batch, t);
  }
  save(o.outputs + "/call.f64", call.download());
  save(o.outputs + "/put.f64", put.download());
  return t;
}

Timings heat_equation(ReferenceDevice &dev, const Options &o) {
  const uint64_t n = o.n, side = n + 2, cells = side * side;
  const std::vector<double> start = load(o.inputs + "/u.f64", cells);
  Array a(dev.device(), cells), b(dev.device(), cells);
  VkPipeline pipeline = dev.pipeline(o.shader_dir + "/heat_equation.comp");
  Timings t;
  for (uint32_t rep = 0; rep < o.repeat; ++rep) {
    a.upload(start);
    b.upload(start);  // the program's second grid is u.copy(): same boundary
    std::vector<vk::Dispatch> batch;
    for (uint32_t step = 0; step < o.steps; ++step) {
      const Array &from = step % 2 ? b : a;
      const Array &to = step % 2 ? a : b;
      vk::Dispatch d;
      d.pipeline = pipeline;
      const uint64_t operands[4] = {from.address(), to.address(), n, bits(o.alpha)};
      std::memcpy(d.push.operand, operands, sizeof operands);
      d.push.count = n * n;
      d.push.tables = dev.tables();
      d.groups = dev.groups((n * n + kWorkgroupSize - 1) / kWorkgroupSize);
      d.accesses = {access(from, false), access(to, true)};
      batch.push_back(d);
    }
    run_timed(dev, batch, t);
  }
  save(o.outputs + "/u.f64", (o.steps % 2 ? b : a).download());
  return t;
}

void print_list(const char *key, const std::vector<double> &values) {
  std::printf("\"%s\": [", key);
  for (size_t i = 0; i < values.size(); ++i) std::printf("%s%.9g", i ? ", " : "", values[i]);
  std::printf("]");
}

int run(int argc, char **argv) {
  const Options o = parse(argc, argv);
  const char *validation = std::getenv("NPVK_VALIDATION");
  ReferenceDevice dev(validation && std::strcmp(validation, "1") == 0);
  Timings t;
  if (o.program == "black_scholes")
    t = black_scholes(dev, o);
  else if (o.program == "heat_equation")
    t = heat_equation(dev, o);
  else
    usage("unknown program");
  std::printf("{\"program\": \"%s\", \"n\": %" PRIu64 ", \"steps\": %u, \"repeat\": %u, ",
              o.program.c_str(), o.n, o.steps, o.repeat);
  std::printf("\"device\": \"%s\", \"driver\": \"%s\", \"timestamps\": %s, ", dev.info().name,
              dev.info().driver_info, dev.info().timestamps ? "true" : "false");
  print_list("step_seconds", t.step_seconds);
  std::printf(", ");
  print_list("submission_seconds", t.submission_seconds);
  std::printf("}\n");
  const uint64_t messages = dev.validation_messages();
  if (messages) {
    std::fprintf(stderr, "npvk_reference_bench: %" PRIu64 " validation messages\n", messages);
    return 3;
  }
  return 0;
}

}  // namespace
}  // namespace npvk::bench

int main(int argc, char **argv) {
  try {
    return npvk::bench::run(argc, argv);
  } catch (const npvk::Error &e) {
    std::fprintf(stderr, "npvk_reference_bench: %s\n", e.what());
    // No device to run on (ctest's skip code): not a failure of the kernels.
    const bool no_device = e.status() == NPVK_ERR_NO_DEVICE || e.status() == NPVK_ERR_UNSUPPORTED;
    return no_device ? 77 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "npvk_reference_bench: %s\n", e.what());
    return 1;
  }
}
