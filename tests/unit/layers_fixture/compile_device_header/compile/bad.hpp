// Breaks one rule: compile/ is backend-free, so no Vulkan header.
#include <vulkan/vulkan.h>
