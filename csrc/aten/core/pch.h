// Precompiled header of libtorch_foo: the torch headers nearly every translation unit includes.
#include <ATen/ATen.h>
#include <torch/library.h>
