// check_lavapipe.cpp -- run shaders/math_f64.glsl on a real Vulkan device
// (Mesa lavapipe in CI/dev machines) and compare with glibc.
//
// It loads the SPIR-V that check_glsl.sh builds (build/test_<variant>.spv:
// bindings 0..4 = x[], y[], out[5*i + {exp, log, pow, fmod}], f32 pairs[],
// f32 out[]; push constant 0 = the device address of the table buffer, which
// holds npvk::math_f64_table_data() as in the runtime), runs it on ~2.4 M
// inputs in several regimes and prints the max ulp distance to glibc per
// function.
//
// Usage: check_lavapipe SPV [--tol-exp U] [--tol-log U] [--tol-pow U] [--scale S]
// Picks a CPU (lavapipe) device if there is one, else the first device
// (VK_ICD_FILENAMES can force one). Exit 0 if within tolerance, 1 if not,
// 77 if no Vulkan device with shaderFloat64 + shaderInt64 is available.

#include <vulkan/vulkan.h>

#include "compile/math_tables.hpp"  // the table data the runtime uploads (linked in)

#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#define VK(call)                                                                          \
    do {                                                                                  \
        VkResult r_ = (call);                                                             \
        if (r_ != VK_SUCCESS) {                                                           \
            std::fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, r_); \
            std::exit(2);                                                                 \
        }                                                                                 \
    } while (0)

namespace {

uint64_t bitsOf(double x) { uint64_t b; std::memcpy(&b, &x, 8); return b; }
double fromBits(uint64_t b) { double x; std::memcpy(&x, &b, 8); return x; }
uint32_t fbits(float x) { uint32_t b; std::memcpy(&b, &x, 4); return b; }

double ulpDiff(double a, double b)
{
    bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return (na && nb) ? 0.0 : 1e30;
    if (std::signbit(a) != std::signbit(b) && !(a == 0.0 && b == 0.0)) return 1e30;
    auto ord = [](double x) {
        int64_t i = (int64_t)bitsOf(x);
        return i < 0 ? (__int128)INT64_MIN - i : (__int128)i;
    };
    __int128 d = ord(a) - ord(b);
    return (double)(d < 0 ? -d : d);
}

struct Buf {
    VkBuffer buf = VK_NULL_HANDLE;
    VkDeviceMemory mem = VK_NULL_HANDLE;
    void* ptr = nullptr;
    VkDeviceSize size = 0;
};

struct Ctx {
    VkInstance inst = VK_NULL_HANDLE;
    VkPhysicalDevice phys = VK_NULL_HANDLE;
    VkDevice dev = VK_NULL_HANDLE;
    VkQueue queue = VK_NULL_HANDLE;
    uint32_t qfam = 0;
    VkPhysicalDeviceMemoryProperties memProps{};

    Buf make(VkDeviceSize size)
    {
        Buf b;
        b.size = size;
        VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bi.size = size;
        bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
        bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
        VK(vkCreateBuffer(dev, &bi, nullptr, &b.buf));
        VkMemoryRequirements req;
        vkGetBufferMemoryRequirements(dev, b.buf, &req);
        uint32_t type = UINT32_MAX;
        const VkMemoryPropertyFlags want =
            VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        for (uint32_t i = 0; i < memProps.memoryTypeCount; ++i)
            if ((req.memoryTypeBits & (1u << i)) && (memProps.memoryTypes[i].propertyFlags & want) == want) {
                type = i;
                break;
            }
        if (type == UINT32_MAX) {
            std::fprintf(stderr, "no host-visible coherent memory\n");
            std::exit(2);
        }
        VkMemoryAllocateFlagsInfo fi{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
        fi.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
        VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        ai.pNext = &fi;
        ai.allocationSize = req.size;
        ai.memoryTypeIndex = type;
        VK(vkAllocateMemory(dev, &ai, nullptr, &b.mem));
        VK(vkBindBufferMemory(dev, b.buf, b.mem, 0));
        VK(vkMapMemory(dev, b.mem, 0, size, 0, &b.ptr));
        return b;
    }

    uint64_t address(const Buf& b)
    {
        VkBufferDeviceAddressInfo ai{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
        ai.buffer = b.buf;
        return vkGetBufferDeviceAddress(dev, &ai);
    }
};

int initDevice(Ctx& c)
{
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "npvk-math-check";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    if (vkCreateInstance(&ici, nullptr, &c.inst) != VK_SUCCESS) return 77;
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(c.inst, &n, nullptr);
    std::vector<VkPhysicalDevice> devs(n);
    vkEnumeratePhysicalDevices(c.inst, &n, devs.data());
    for (VkPhysicalDevice d : devs) {
        VkPhysicalDeviceProperties p;
        vkGetPhysicalDeviceProperties(d, &p);
        if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) { c.phys = d; break; }
    }
    if (!c.phys && n) c.phys = devs[0];
    if (!c.phys) return 77;
    VkPhysicalDeviceFeatures f;
    vkGetPhysicalDeviceFeatures(c.phys, &f);
    if (!f.shaderFloat64 || !f.shaderInt64) return 77;
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f12;
    vkGetPhysicalDeviceFeatures2(c.phys, &f2);
    if (!f12.bufferDeviceAddress) return 77;

    VkPhysicalDeviceFloatControlsProperties fc{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &fc;
    vkGetPhysicalDeviceProperties2(c.phys, &p2);
    std::printf("device: %s (driver %u.%u.%u), shaderDenormPreserveFloat64=%d shaderDenormFlushToZeroFloat64=%d\n",
                p2.properties.deviceName, VK_VERSION_MAJOR(p2.properties.driverVersion),
                VK_VERSION_MINOR(p2.properties.driverVersion), VK_VERSION_PATCH(p2.properties.driverVersion),
                fc.shaderDenormPreserveFloat64, fc.shaderDenormFlushToZeroFloat64);

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(c.phys, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(c.phys, &nq, qs.data());
    c.qfam = UINT32_MAX;
    for (uint32_t i = 0; i < nq; ++i)
        if (qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) { c.qfam = i; break; }
    if (c.qfam == UINT32_MAX) return 77;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = c.qfam;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkPhysicalDeviceFeatures en{};
    en.shaderFloat64 = VK_TRUE;
    en.shaderInt64 = VK_TRUE;
    VkPhysicalDeviceVulkan12Features en12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    en12.bufferDeviceAddress = VK_TRUE;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &en12;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.pEnabledFeatures = &en;
    VK(vkCreateDevice(c.phys, &dci, nullptr, &c.dev));
    vkGetDeviceQueue(c.dev, c.qfam, 0, &c.queue);
    vkGetPhysicalDeviceMemoryProperties(c.phys, &c.memProps);
    return 0;
}

void run(Ctx& c, const std::vector<uint32_t>& spv, Buf* bufs, uint64_t tables, uint32_t groups)
{
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = spv.size() * 4;
    smci.pCode = spv.data();
    VkShaderModule sm;
    VK(vkCreateShaderModule(c.dev, &smci, nullptr, &sm));
    VkDescriptorSetLayoutBinding b[5];
    for (uint32_t i = 0; i < 5; ++i)
        b[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo dl{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    dl.bindingCount = 5;
    dl.pBindings = b;
    VkDescriptorSetLayout dsl;
    VK(vkCreateDescriptorSetLayout(c.dev, &dl, nullptr, &dsl));
    VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(uint64_t)};
    VkPipelineLayoutCreateInfo pl{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pl.setLayoutCount = 1;
    pl.pSetLayouts = &dsl;
    pl.pushConstantRangeCount = 1;
    pl.pPushConstantRanges = &pcr;
    VkPipelineLayout layout;
    VK(vkCreatePipelineLayout(c.dev, &pl, nullptr, &layout));
    VkComputePipelineCreateInfo cp{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cp.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT,
                sm, "main", nullptr};
    cp.layout = layout;
    VkPipeline pipe;
    VK(vkCreateComputePipelines(c.dev, VK_NULL_HANDLE, 1, &cp, nullptr, &pipe));
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 5};
    VkDescriptorPoolCreateInfo dp{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dp.maxSets = 1;
    dp.poolSizeCount = 1;
    dp.pPoolSizes = &ps;
    VkDescriptorPool pool;
    VK(vkCreateDescriptorPool(c.dev, &dp, nullptr, &pool));
    VkDescriptorSetAllocateInfo da{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    da.descriptorPool = pool;
    da.descriptorSetCount = 1;
    da.pSetLayouts = &dsl;
    VkDescriptorSet set;
    VK(vkAllocateDescriptorSets(c.dev, &da, &set));
    VkDescriptorBufferInfo bi[5];
    VkWriteDescriptorSet w[5];
    for (uint32_t i = 0; i < 5; ++i) {
        bi[i] = {bufs[i].buf, 0, VK_WHOLE_SIZE};
        w[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, nullptr, set, i, 0, 1,
                VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, nullptr, &bi[i], nullptr};
    }
    vkUpdateDescriptorSets(c.dev, 5, w, 0, nullptr);
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.queueFamilyIndex = c.qfam;
    VkCommandPool cmdPool;
    VK(vkCreateCommandPool(c.dev, &cpi, nullptr, &cmdPool));
    VkCommandBufferAllocateInfo cba{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cba.commandPool = cmdPool;
    cba.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cba.commandBufferCount = 1;
    VkCommandBuffer cmd;
    VK(vkAllocateCommandBuffers(c.dev, &cba, &cmd));
    VkCommandBufferBeginInfo beg{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkBeginCommandBuffer(cmd, &beg));
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
    vkCmdPushConstants(cmd, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof tables, &tables);
    vkCmdDispatch(cmd, groups, 1, 1);
    VK(vkEndCommandBuffer(cmd));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    VK(vkQueueSubmit(c.queue, 1, &si, VK_NULL_HANDLE));
    VK(vkQueueWaitIdle(c.queue));
}

struct Rng {
    std::mt19937_64 g{12345};
    double uni(double lo, double hi) { return lo + (hi - lo) * (double)(g() >> 11) * 0x1p-53; }
    int irange(int lo, int hi) { return lo + (int)(g() % (uint64_t)(hi - lo + 1)); }
    double bitsExp(int elo, int ehi, bool sign)
    {
        uint64_t e = (uint64_t)irange(elo, ehi), m = g() & 0x000FFFFFFFFFFFFFULL;
        return fromBits((sign ? (g() & 0x8000000000000000ULL) : 0) | (e << 52) | m);
    }
};

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s SPV [--tol-exp U] [--tol-log U] [--tol-pow U] [--scale S]\n", argv[0]);
        return 2;
    }
    double tolExp = 1, tolLog = 1, tolPow = 2, scale = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        double v = std::atof(argv[i + 1]);
        if (a == "--tol-exp") tolExp = v;
        else if (a == "--tol-log") tolLog = v;
        else if (a == "--tol-pow") tolPow = v;
        else if (a == "--scale") scale = v;
    }
    std::ifstream f(argv[1], std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (raw.empty() || raw.size() % 4) {
        std::fprintf(stderr, "cannot read SPIR-V %s (run check_glsl.sh first)\n", argv[1]);
        return 2;
    }
    std::vector<uint32_t> spv(raw.size() / 4);
    std::memcpy(spv.data(), raw.data(), raw.size());

    Ctx c;
    if (int rc = initDevice(c)) {
        std::printf("SKIP: no Vulkan device with shaderFloat64 + shaderInt64\n");
        return rc;
    }

    // ---- inputs: several regimes, all four f64 functions evaluated on each
    Rng rng;
    std::vector<double> xs, ys;
    std::vector<std::string> setName;
    std::vector<size_t> setStart;
    auto beginSet = [&](const char* name) { setName.push_back(name); setStart.push_back(xs.size()); };
    auto N = [&](size_t n) { return (size_t)(n * scale); };
    const double sp[] = {0.0, -0.0, fromBits(1), -fromBits(1), DBL_MIN, DBL_MAX, -DBL_MAX, INFINITY, -INFINITY,
                         NAN, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 0.1, 10.0, 1e-300, 1e300, -1e300,
                         709.782712893384, 709.78271289338403, -745.1332191019411, -745.2, -708.4, 1023.0,
                         -1075.0, 0x1p53, 0x1p63, 9007199254740991.0, std::nextafter(1.0, 2.0),
                         std::nextafter(1.0, 0.0), 0x0.0000000000001p-1022 * 12345, 1e19, -7.0};
    beginSet("special values (cross)");
    for (double a : sp)
        for (double b : sp) { xs.push_back(a); ys.push_back(b); }
    beginSet("exp range x, random y");
    for (size_t i = 0; i < N(400000); ++i) { xs.push_back(rng.uni(-745.2, 709.8)); ys.push_back(rng.uni(-4, 4)); }
    beginSet("all positive exponents");
    for (size_t i = 0; i < N(400000); ++i) { xs.push_back(rng.bitsExp(0, 2046, false)); ys.push_back(rng.bitsExp(0, 2046, true)); }
    beginSet("near 1 / subnormal");
    for (size_t i = 0; i < N(200000); ++i) {
        double x = 1.0 + std::ldexp(rng.uni(-1, 1), -rng.irange(1, 52));
        xs.push_back(x);
        ys.push_back(x == 1.0 ? 3.0 : rng.uni(-740, 700) / std::log(x));  // pow with huge |y|
        uint64_t m = (rng.g() & 0x000FFFFFFFFFFFFFULL) >> rng.irange(0, 51);
        xs.push_back(fromBits(m ? m : 1));
        ys.push_back(rng.uni(-1.1, 1.1));
    }
    beginSet("pow: |y log x| <= 760");
    for (size_t i = 0; i < N(400000); ++i) {
        double x = rng.bitsExp(0, 2046, false);
        if (x == 1.0) continue;
        xs.push_back(x);
        ys.push_back(rng.uni(-760, 720) / std::log(x));
    }
    beginSet("pow: x<0, integer y");
    for (size_t i = 0; i < N(200000); ++i) { xs.push_back(-rng.uni(0.01, 100)); ys.push_back(rng.irange(-200, 200)); }
    beginSet("fmod: |x|/|y| in [1, 2^64]");
    for (size_t i = 0; i < N(400000); ++i) {
        double x = rng.bitsExp(0, 2046, true);
        xs.push_back(x);
        ys.push_back(std::ldexp(rng.uni(0.5, 1.0), std::ilogb(x) + 1 - rng.irange(0, 64)));
    }
    beginSet("fmod: huge x, tiny y");
    for (size_t i = 0; i < N(20000); ++i) { xs.push_back(rng.bitsExp(1800, 2046, true)); ys.push_back(rng.bitsExp(0, 200, true)); }
    setStart.push_back(xs.size());

    size_t n = (xs.size() + 63) / 64 * 64;
    xs.resize(n, 1.0);
    ys.resize(n, 1.0);
    if (n / 64 > 65535) {
        std::fprintf(stderr, "too many points for one dispatch; lower --scale\n");
        return 2;
    }
    std::vector<float> fa(2 * n);
    for (size_t i = 0; i < n; ++i) {  // float pairs: random bits, no NaN
        float a, b;
        uint32_t u;
        do { u = (uint32_t)rng.g(); std::memcpy(&a, &u, 4); } while (std::isnan(a));
        do { u = (uint32_t)rng.g(); std::memcpy(&b, &u, 4); } while (std::isnan(b));
        if (i % 2) b = (float)(a * rng.uni(1e-7, 1.0));  // mostly close magnitudes
        fa[2 * i] = a;
        fa[2 * i + 1] = b;
    }

    Buf bufs[5] = {c.make(8 * n), c.make(8 * n), c.make(8 * 5 * n), c.make(4 * 2 * n), c.make(4 * n)};
    std::memcpy(bufs[0].ptr, xs.data(), 8 * n);
    std::memcpy(bufs[1].ptr, ys.data(), 8 * n);
    std::memcpy(bufs[3].ptr, fa.data(), 8 * n);
    const std::vector<double>& tab = npvk::math_f64_table_data();
    Buf tabBuf = c.make(8 * tab.size());
    std::memcpy(tabBuf.ptr, tab.data(), 8 * tab.size());
    run(c, spv, bufs, c.address(tabBuf), (uint32_t)(n / 64));
    const double* o = (const double*)bufs[2].ptr;
    const float* fo = (const float*)bufs[4].ptr;

    const char* names[5] = {"exp", "log", "pow", "fmod_f64", "fmod_f32"};
    const double tol[5] = {tolExp, tolLog, tolPow, 0, 0};
    double maxAll[5] = {0, 0, 0, 0, 0};
    size_t failed = 0, passed = 0;
    for (size_t s = 0; s + 1 < setStart.size(); ++s) {
        double mx[4] = {0, 0, 0, 0};
        size_t worst[4] = {0, 0, 0, 0};
        for (size_t i = setStart[s]; i < setStart[s + 1]; ++i) {
            double x = xs[i], y = ys[i];
            double ref[4] = {std::exp(x), std::log(x), std::pow(x, y), std::fmod(x, y)};
            for (int k = 0; k < 4; ++k) {
                double d = k == 3 ? ((std::isnan(ref[3]) && std::isnan(o[5 * i + 3])) ||
                                             bitsOf(ref[3]) == bitsOf(o[5 * i + 3]) ? 0.0 : 1e30)
                                  : ulpDiff(o[5 * i + k], ref[k]);
                // special values: NaN/inf/0/1 results must match bit-exactly
                if (s == 0 && k < 3 && (std::isnan(ref[k]) || std::isinf(ref[k]) || ref[k] == 0.0 ||
                                        std::fabs(ref[k]) == 1.0) &&
                    !(std::isnan(ref[k]) && std::isnan(o[5 * i + k])) && bitsOf(ref[k]) != bitsOf(o[5 * i + k]))
                    d = 1e30;
                if (d > mx[k]) { mx[k] = d; worst[k] = i; }
            }
        }
        bool ok = true;
        std::printf("%-28s n=%-7zu", setName[s].c_str(), setStart[s + 1] - setStart[s]);
        for (int k = 0; k < 4; ++k) {
            std::printf("  %s=%s", names[k], mx[k] >= 1e30 ? "BAD" : std::to_string((long long)mx[k]).c_str());
            if (mx[k] > tol[k]) ok = false;
            if (mx[k] > maxAll[k]) maxAll[k] = mx[k];
        }
        std::printf("  %s\n", ok ? "ok" : "FAIL");
        for (int k = 0; k < 4; ++k)
            if (mx[k] > tol[k])
                std::printf("    %s worst: x=%a y=%a gpu=%a glibc=%a\n", names[k], xs[worst[k]], ys[worst[k]],
                            o[5 * worst[k] + k],
                            k == 0 ? std::exp(xs[worst[k]]) : k == 1 ? std::log(xs[worst[k]])
                            : k == 2 ? std::pow(xs[worst[k]], ys[worst[k]]) : std::fmod(xs[worst[k]], ys[worst[k]]));
        ok ? passed++ : failed++;
    }
    size_t fbad = 0;
    for (size_t i = 0; i < n; ++i) {
        float r = std::fmod(fa[2 * i], fa[2 * i + 1]);
        if (!(std::isnan(r) && std::isnan(fo[i])) && fbits(r) != fbits(fo[i])) {
            if (!fbad)
                std::printf("    fmod_f32 mismatch: %a %a gpu=%a glibc=%a\n", fa[2 * i], fa[2 * i + 1], fo[i], r);
            fbad++;
        }
    }
    std::printf("%-28s n=%-7zu  fmod_f32 mismatches=%zu  %s\n", "fmod_f32 random bits", n, fbad, fbad ? "FAIL" : "ok");
    fbad ? failed++ : passed++;
    maxAll[4] = fbad ? 1e30 : 0;
    std::printf("\nOn the device, max ulp vs glibc:");
    for (int k = 0; k < 5; ++k)
        std::printf(" %s=%s", names[k], maxAll[k] >= 1e30 ? "BAD" : std::to_string((long long)maxAll[k]).c_str());
    std::printf("\n%zu passed, %zu failed\n", passed, failed);
    return failed ? 1 : 0;
}
