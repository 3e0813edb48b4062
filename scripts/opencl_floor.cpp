// The OpenCL driver's floor: what any OpenCL process pays before its first pixel and at its exit,
// with none of blurtool's code. scripts/bench-e2e times it beside its job (e), a 64x64 image
// blurred by blurtool, so that blurtool's own fixed cost is that job less this floor.
//
//   opencl_floor [--cpu] [--kernel] [--release]
//       Enumerates the platforms (the ICD loader loads every registered driver), takes the first
//       GPU device (the first CPU device with --cpu; any device where there is none of that
//       type), creates a context and an in-order queue on it, writes 16 KiB to a buffer and
//       reads them back, and leaves with _Exit as blurtool does after writing its outputs: the
//       kernel's teardown of the device context is the rest of the process's wall time.
//       --kernel: then builds a one-line kernel from source and runs it once (with the
//       driver's program cache off, the floor of any first run that compiles a kernel).
//       --release: then releases the buffer, queue and context (and program) before _Exit, to
//       show how much of the teardown the release does inside the process.
//       Prints the device and the seconds of each phase, on one line of standard error
//       (scripts/bench-e2e's launcher keeps standard error):
//         device NAME; platforms S s, context S s, queue and 16 KiB round trip S s[,
//         one-line kernel built and run S s][, release S s]
//       The first phase counts from main; each later one from the end of the one before.
//       Exit status 1 with a message on standard error where no device opens.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

[[noreturn]] void fail(const char* what, cl_int status) {
  std::fprintf(stderr, "opencl_floor: %s failed (OpenCL status %d)\n", what, status);
  std::_Exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const Clock::time_point start = Clock::now();
  bool cpu = false, kernel = false, release = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cpu") == 0) {
      cpu = true;
    } else if (std::strcmp(argv[i], "--kernel") == 0) {
      kernel = true;
    } else if (std::strcmp(argv[i], "--release") == 0) {
      release = true;
    } else {
      std::fprintf(stderr, "usage: opencl_floor [--cpu] [--kernel] [--release]\n");
      return 2;
    }
  }
  const cl_device_type wanted = cpu ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;

  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &count);
  if (status != CL_SUCCESS || count == 0) fail("clGetPlatformIDs", status);
  std::vector<cl_platform_id> platforms(count);
  clGetPlatformIDs(count, platforms.data(), nullptr);
  cl_device_id device = nullptr;
  for (cl_device_type type : {wanted, static_cast<cl_device_type>(CL_DEVICE_TYPE_ALL)}) {
    for (cl_platform_id p : platforms)
      if (!device && clGetDeviceIDs(p, type, 1, &device, nullptr) != CL_SUCCESS) device = nullptr;
    if (device) break;
  }
  if (!device) fail("clGetDeviceIDs", CL_DEVICE_NOT_FOUND);
  const double platforms_s = since(start);
  char name[256] = {};
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);

  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  if (status != CL_SUCCESS) fail("clCreateContext", status);
  const double context_s = since(start);

  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  if (status != CL_SUCCESS) fail("clCreateCommandQueue", status);
  std::vector<unsigned char> bytes(16 * 1024, 0x5a), back(bytes.size(), 0);
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes.size(), nullptr, &status);
  if (status != CL_SUCCESS) fail("clCreateBuffer", status);
  status = clEnqueueWriteBuffer(queue, buffer, CL_FALSE, 0, bytes.size(), bytes.data(), 0, nullptr,
                                nullptr);
  if (status != CL_SUCCESS) fail("clEnqueueWriteBuffer", status);
  status =
      clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, back.size(), back.data(), 0, nullptr, nullptr);
  if (status != CL_SUCCESS) fail("clEnqueueReadBuffer", status);
  if (back != bytes) {
    std::fprintf(stderr, "opencl_floor: the 16 KiB came back changed\n");
    std::_Exit(1);
  }
  const double copy_s = since(start);

  double kernel_s = copy_s;
  cl_program program = nullptr;
  cl_kernel one_line = nullptr;
  if (kernel) {
    const char* source = "kernel void one_line(global uchar* b) { b[get_global_id(0)] ^= 0xff; }";
    program = clCreateProgramWithSource(context, 1, &source, nullptr, &status);
    if (status != CL_SUCCESS) fail("clCreateProgramWithSource", status);
    status = clBuildProgram(program, 1, &device, "", nullptr, nullptr);
    if (status != CL_SUCCESS) fail("clBuildProgram", status);
    one_line = clCreateKernel(program, "one_line", &status);
    if (status != CL_SUCCESS) fail("clCreateKernel", status);
    clSetKernelArg(one_line, 0, sizeof buffer, &buffer);
    const size_t items = bytes.size();
    status =
        clEnqueueNDRangeKernel(queue, one_line, 1, nullptr, &items, nullptr, 0, nullptr, nullptr);
    if (status != CL_SUCCESS) fail("clEnqueueNDRangeKernel", status);
    status = clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, back.size(), back.data(), 0, nullptr,
                                 nullptr);
    if (status != CL_SUCCESS || back[0] != 0xa5) fail("the one-line kernel", status);
    kernel_s = since(start);
  }
  double release_s = kernel_s;
  if (release) {
    if (one_line) clReleaseKernel(one_line);
    if (program) clReleaseProgram(program);
    clReleaseMemObject(buffer);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    release_s = since(start);
  }

  std::string line = "device " + std::string(name) + "; ";
  char part[160];
  std::snprintf(part, sizeof part,
                "platforms %.3f s, context %.3f s, queue and 16 KiB round trip %.3f s", platforms_s,
                context_s - platforms_s, copy_s - context_s);
  line += part;
  if (kernel) {
    std::snprintf(part, sizeof part, ", one-line kernel built and run %.3f s", kernel_s - copy_s);
    line += part;
  }
  if (release) {
    std::snprintf(part, sizeof part, ", release %.3f s", release_s - kernel_s);
    line += part;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::_Exit(0);
}
