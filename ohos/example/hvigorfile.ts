// Build script of the example app (an entry HAP): hvigor's built-in HAP tasks.
//
// SPEC OHOS-5: the app loads libarkagent.so from the HAR module ../arkagent, which hvigor
// compiles into the HAP without packing it (the HAR's own check runs only before
// PackageHar). Without ../arkagent/libs/<abi>/libarkagent.so the app would build, install
// and then fail when the page loads the native module; so the build stops first (before
// <target>@PreBuild) and names the command that produces the library.
// Tested off-device by tests/arkts/ohos_5_example_build.test.js (transpiled, with
// stand-ins for hvigor).
import * as fs from 'fs';
import * as path from 'path';
import { HvigorNode, HvigorPlugin } from '@ohos/hvigor';
import { hapTasks } from '@ohos/hvigor-ohos-plugin';

/** The native library of the HAR this app depends on. */
export const NATIVE_LIB: string = 'libarkagent.so';
/** OpenHarmony ABIs hvigor packs from libs/<abi>/. */
export const OHOS_ABIS: string[] = ['arm64-v8a', 'armeabi-v7a', 'x86_64'];
/** Build targets of this module (build-profile.json5 `targets`). */
export const TARGETS: string[] = ['default'];
/** What produces the library, run from the repository root (the parent of ohos/). */
export const BUILD_COMMAND: string = 'OHOS_NDK_HOME=<DevEco>/sdk/default/openharmony scripts/build-ohos.sh';

/** Throws unless harDir/libs/<abi>/libarkagent.so is a non-empty file for some ABI; returns the ABIs. */
export function checkHarNativeLib(harDir: string): string[] {
  const abis: string[] = OHOS_ABIS.filter((abi: string): boolean => {
    const lib: string = path.join(harDir, 'libs', abi, NATIVE_LIB);
    return fs.existsSync(lib) && fs.statSync(lib).isFile() && fs.statSync(lib).size > 0;
  });
  if (abis.length === 0) {
    throw new Error(`example: no ${path.join(harDir, 'libs')}/<abi>/${NATIVE_LIB} (looked for ` +
      `${OHOS_ABIS.join(', ')}): the app would fail when it loads the native module. Build it ` +
      `first, from the repository root: ${BUILD_COMMAND}`);
  }
  return abis;
}

/** The hvigor plugin running the check of harDir before each target's PreBuild task. */
export function harNativeLibCheckPlugin(harDir: string): HvigorPlugin {
  return {
    pluginId: 'arkagentExampleNativeLibCheck',
    apply(node: HvigorNode): void {
      for (const target of TARGETS) {
        node.registerTask({
          name: `${target}@ArkagentCheckHarNativeLib`,
          run(): void {
            const abis: string[] = checkHarNativeLib(harDir);
            console.info(`example: ${NATIVE_LIB} found for ${abis.join(', ')}`);
          },
          postDependencies: [`${target}@PreBuild`]
        });
      }
    }
  };
}

export default {
  system: hapTasks,  /* Built-in plugin of Hvigor. It cannot be modified. */
  plugins: [harNativeLibCheckPlugin(path.join(path.dirname(__filename), '..', 'arkagent'))]  /* The HAR's native library check (OHOS-5). */
}
