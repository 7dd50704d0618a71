/**
 * The app the service itself publishes as: the audit events of object changes and the usage
 * counts. Its own module so that code which only needs to recognise those events (webhook
 * filters, usage metering) does not bundle the audit writer, the publisher and the BSON codec.
 */
export const SYSTEM_NAMESPACE = 'Gatehouse.System';
export const SYSTEM_APP_KEY = '000000000000000000000001';
