// Build script of the HAR module. harTasks is hvigor's built-in HAR build; it packs Index.ets,
// src/main and the prebuilt libs/<abi>/libarkagent.so (see scripts/build-ohos.sh).
//
// SPEC OHOS-5: a HAR without its native library must not be built. The plugin below adds a
// task that runs before the HAR is packed (<target>@PackageHar) and fails the build unless
// libs/<abi>/libarkagent.so exists for at least one OpenHarmony ABI; otherwise the HAR
// would install fine and fail at the app's first `import` on a phone.
// Tested off-device by tests/arkts/ohos_5.test.js (transpiled, with stand-ins for hvigor).
import * as fs from 'fs';
import * as path from 'path';
import { HvigorNode, HvigorPlugin } from '@ohos/hvigor';
import { harTasks } from '@ohos/hvigor-ohos-plugin';

/** The native library every HAR built from this module must carry. */
export const NATIVE_LIB: string = 'libarkagent.so';
/** OpenHarmony ABIs hvigor packs from libs/<abi>/. */
export const OHOS_ABIS: string[] = ['arm64-v8a', 'armeabi-v7a', 'x86_64'];
/** Build targets whose HAR packing is guarded (build-profile.json5 `targets`: the HAR). */
export const TARGETS: string[] = ['default'];

/** ABIs under moduleDir/libs that hold a non-empty libarkagent.so. */
export function abisWithNativeLib(moduleDir: string): string[] {
  return OHOS_ABIS.filter((abi: string): boolean => {
    const lib: string = path.join(moduleDir, 'libs', abi, NATIVE_LIB);
    return fs.existsSync(lib) && fs.statSync(lib).isFile() && fs.statSync(lib).size > 0;
  });
}

/** Throws when moduleDir/libs/<abi>/libarkagent.so exists for no ABI; returns the ABIs. */
export function checkNativeLib(moduleDir: string): string[] {
  const abis: string[] = abisWithNativeLib(moduleDir);
  if (abis.length === 0) {
    throw new Error(`arkagent: no libs/<abi>/${NATIVE_LIB} in ${moduleDir} (looked for ` +
      `${OHOS_ABIS.join(', ')}). Build it first: OHOS_NDK_HOME=<OpenHarmony SDK> ` +
      `scripts/build-ohos.sh. A HAR without it fails at the app's first import.`);
  }
  return abis;
}

/**
 * The hvigor plugin registering the check of moduleDir (this module: the directory of this
 * hvigorfile.ts) before each target's PackageHar task.
 */
export function nativeLibCheckPlugin(moduleDir: string): HvigorPlugin {
  return {
    pluginId: 'arkagentNativeLibCheck',
    apply(node: HvigorNode): void {
      for (const target of TARGETS) {
        node.registerTask({
          name: `${target}@ArkagentCheckNativeLib`,
          run(): void {
            const abis: string[] = checkNativeLib(moduleDir);
            console.info(`arkagent: packing ${NATIVE_LIB} for ${abis.join(', ')}`);
          },
          postDependencies: [`${target}@PackageHar`]
        });
      }
    }
  };
}

export default {
  system: harTasks,  /* Built-in plugin of Hvigor. It cannot be modified. */
  plugins: [nativeLibCheckPlugin(path.dirname(__filename))]  /* Custom plugins: the native library check (OHOS-5). */
}
