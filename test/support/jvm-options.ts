/**
 * JVM options for every DynamoDB Local the suite starts (the global setups' own, and those of the
 * runtimes the tests spawn, which inherit this process's environment): the client compiler only
 * and the serial collector. A test run is a few minutes of short, varied requests on two cores,
 * where the optimizing compiler's and the parallel collector's threads cost more CPU than they
 * win back: on search.test.ts and objects-paging.test.ts the whole run took about 46 s of CPU
 * with them against 54–60 s without. The local runtime (`npm start`) keeps the JVM's defaults.
 * An operator's own JDK_JAVA_OPTIONS wins.
 */
const TEST_JVM_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

export function useTestJvmOptions(): void {
  process.env.JDK_JAVA_OPTIONS ??= TEST_JVM_OPTIONS;
}
