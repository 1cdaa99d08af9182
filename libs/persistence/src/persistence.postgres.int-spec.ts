import { persistenceContract } from './persistence.contract';
import { postgresDataSource } from './test-data-sources.testing';

persistenceContract('PostgreSQL server', () => postgresDataSource('pcontract', 4));
