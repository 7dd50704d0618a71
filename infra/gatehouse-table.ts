/**
 * The single table, built from its one declaration in shared/db/table.ts (the local runtime
 * creates DynamoDB Local's table from the same object).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import type { TableDef } from '#shared/db/table.ts';

export interface GatehouseTableProps {
  /** Keys, indexes, TTL attribute and stream of the table (`TABLE` from shared/db/table.ts). */
  readonly definition: TableDef;
  /**
   * DynamoDB deletion protection: the table cannot be deleted, by CloudFormation or anyone,
   * until it is turned off.
   * @default true
   */
  readonly deletionProtection?: boolean;
}

/** Item-level actions a request handler uses. Scan is left out on purpose: no request path scans. */
const DATA_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:ConditionCheckItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:DescribeTable',
];

/** Reads only (the MQTT authorizer: token status, instance scope). */
const READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:DescribeTable'];

export class GatehouseTable extends Construct {
  readonly table: Table;
  private readonly indexNames: readonly string[];

  constructor(scope: Construct, id: string, props: GatehouseTableProps) {
    super(scope, id);
    const def = props.definition;
    this.table = new Table(this, 'Table', {
      partitionKey: { name: def.partitionKey, type: AttributeType.STRING },
      sortKey: { name: def.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      stream: StreamViewType[def.stream],
      timeToLiveAttribute: def.ttlAttribute,
      deletionProtection: props.deletionProtection ?? true,
      // Customer data: never deleted with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of def.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }
    this.indexNames = def.indexes.map((i) => i.name);
  }

  get tableName(): string {
    return this.table.tableName;
  }

  /**
   * Lets a function read and write items (transactions included: they need the item actions)
   * in the table and query its indexes. Unlike `Table.grantReadWriteData` it names each index
   * instead of `index/*`, and it does not grant Scan.
   */
  grantReadWriteData(grantee: IGrantable): Grant {
    const arn = this.table.tableArn;
    return Grant.addToPrincipal({
      grantee,
      actions: DATA_ACTIONS,
      resourceArns: [arn, ...this.indexNames.map((name) => `${arn}/index/${name}`)],
    });
  }

  /**
   * Lets the key manager read and replace the published JWKS: GetItem and PutItem of the items
   * whose partition key is `publicKeysPk`, and nothing else of the table.
   */
  grantPublishKeys(grantee: IGrantable, publicKeysPk: string): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [publicKeysPk] } },
    });
  }

  /** Lets a function read items and query the indexes, nothing else (no Scan). */
  grantReadData(grantee: IGrantable): Grant {
    const arn = this.table.tableArn;
    return Grant.addToPrincipal({
      grantee,
      actions: READ_ACTIONS,
      resourceArns: [arn, ...this.indexNames.map((name) => `${arn}/index/${name}`)],
    });
  }
}
