# lit configuration for the iosig Clang plugin's tests (see CMakeLists.txt here).
import os
import lit.formats

config.name = 'iosig-clang-plugin'
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = ['.c', '.cpp']
config.excludes = ['Inputs']
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = config.iosig_binary_dir

plugin = config.iosig_plugin
clang = config.iosig_clang
clangxx = config.iosig_clangxx
config.substitutions.append(('%clangxx_plugin', f'{clangxx} -fplugin={plugin}'))
config.substitutions.append(('%clang_plugin', f'{clang} -fplugin={plugin}'))
config.substitutions.append(('%clangxx', clangxx))
config.substitutions.append(('%clang', clang))
config.substitutions.append(('%plugin', plugin))
config.substitutions.append(('%python', config.iosig_python))
config.substitutions.append(('%inputs', os.path.join(config.test_source_root, 'Inputs')))
config.substitutions.append(('FileCheck', config.iosig_filecheck))
# Fixed diagnostics format whatever the terminal.
config.environment['TERM'] = 'dumb'
# The annotated sources must also build with GCC, which only sees unknown pragmas.
import shutil
gcc = shutil.which('gcc')
if gcc:
    config.available_features.add('gcc')
    config.substitutions.append(('%gcc', gcc))
