// The parameterised test every test_ops_*.cpp instantiates with its cases.
#ifndef NPVK_TESTS_CPP_OP_CASE_TEST_HPP
#define NPVK_TESTS_CPP_OP_CASE_TEST_HPP

#include <gtest/gtest.h>

#include "npvk_test_support.hpp"
#include "op_case.hpp"

namespace npvk_test {

class OpCaseTest : public NpvkTest, public ::testing::WithParamInterface<OpCase> {};

inline std::string OpCaseName(const ::testing::TestParamInfo<OpCase> &info) {
  return LoopName(info.param.loop);
}

}  // namespace npvk_test

#endif  // NPVK_TESTS_CPP_OP_CASE_TEST_HPP
