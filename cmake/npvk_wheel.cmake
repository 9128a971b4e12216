# Install rules of the Python wheel (NPVK_WHEEL, set by pyproject.toml). The
# prefix is the wheel's site-packages, and everything lives in the npvk
# package, found relative to itself:
#   npvk/libnpvk.so             the runtime (the extension's RPATH is $ORIGIN)
#   npvk/_native*.so, npvk/*.py the NumPy shim (python-shim/CMakeLists.txt)
#   npvk/include/npvk/*.h       the C ABI (npvk.h and the parts it includes),
#                               for npvk.get_include()
#   npvk/bin/npvk-info          run by the npvk-info console script (npvk/_info.py)
#   npvk_autoload.py, npvk-autoload.pth   NPVK=1 for every program
install(TARGETS npvk LIBRARY DESTINATION npvk)
install(DIRECTORY ${CMAKE_CURRENT_LIST_DIR}/../include/npvk DESTINATION npvk/include
        FILES_MATCHING PATTERN "*.h")
set_target_properties(npvk-info PROPERTIES INSTALL_RPATH "$ORIGIN/..")
install(TARGETS npvk-info RUNTIME DESTINATION npvk/bin)
